package dev.redlock.test;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The nodes behind {@link WithRedisNodes}: one {@link RedisNodes} per
 * {@code (count, tls, inProcess)} for the whole JVM run, started on first use and stopped
 * by the kit's JVM shutdown hook. Plain JUnit tests and Spring tests with the same
 * settings get the same nodes, so Spring's context cache, which keeps contexts pointing
 * at them, stays valid.
 */
final class SharedRedisNodes {

	private static final ConcurrentMap<Settings, RedisNodes> NODES = new ConcurrentHashMap<>();

	private SharedRedisNodes() {
	}

	/**
	 * The running nodes for these settings, started on first use.
	 * @param count the number of nodes, at least 1
	 * @param tls whether they also serve TLS
	 * @return the nodes shared by every test with these settings
	 */
	static RedisNodes get(int count, boolean tls) {
		return get(count, tls, false);
	}

	/**
	 * The running nodes for these settings, started on first use.
	 * @param count the number of nodes, at least 1
	 * @param tls whether they also serve TLS
	 * @param inProcess whether they are in-process stand-ins
	 * @return the nodes shared by every test with these settings
	 * @throws IllegalArgumentException for TLS stand-ins, which do not exist
	 */
	static RedisNodes get(int count, boolean tls, boolean inProcess) {
		if (tls && inProcess) {
			throw new IllegalArgumentException("@WithRedisNodes(tls = true, inProcess = true): the in-process "
					+ "stand-in serves no TLS; TLS nodes need a redis-server");
		}
		return NODES.computeIfAbsent(new Settings(count, tls, inProcess), (settings) -> {
			if (inProcess) {
				return RedisNodes.startInProcess(count);
			}
			return tls ? RedisNodes.startTls(count) : RedisNodes.start(count);
		});
	}

	/**
	 * The nodes for a test's annotation.
	 * @param annotation the test's {@code @WithRedisNodes}
	 * @return the shared nodes
	 * @throws IllegalArgumentException if the count is below 1
	 */
	static RedisNodes get(WithRedisNodes annotation) {
		if (annotation.count() < 1) {
			throw new IllegalArgumentException("@WithRedisNodes(count) must be at least 1, was " + annotation.count());
		}
		return get(annotation.count(), annotation.tls(), annotation.inProcess());
	}

	private record Settings(int count, boolean tls, boolean inProcess) {
	}

}
