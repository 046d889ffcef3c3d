package dev.redlock.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains an {@link InvalidRedlockPropertyException} at startup: which property, what is
 * wrong, what to do.
 */
class RedlockConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<InvalidRedlockPropertyException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, InvalidRedlockPropertyException cause) {
		String description = "The Redlock property '" + cause.property() + "' is invalid: " + cause.reason();
		return new FailureAnalysis(description, action(cause.property(), cause.reason()), cause);
	}

	private static String action(String property, String reason) {
		if (reason.contains("refuse our credentials")) {
			return "Check the user and password of those nodes in redlock.nodes "
					+ "(redis://user:password@host:port), and that the user exists on each server.";
		}
		if (property.equals("redlock.nodes")) {
			return "List 3 or 5 independent Redis masters, for example:\n\n  redlock:\n    nodes:\n"
					+ "      - redis://redis-a:6379\n      - redis://redis-b:6379\n      - redis://redis-c:6379\n\n"
					+ "or set redlock.enabled=false to turn Redlock off.";
		}
		if (property.startsWith("redlock.nodes[")) {
			return "Write each node as redis://[user:password@]host:port[/database] (rediss:// for TLS), and list "
					+ "every Redis server only once.";
		}
		return "Update '" + property + "' in your application's configuration (see the README's configuration "
				+ "reference for allowed values).";
	}

}
