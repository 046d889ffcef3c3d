package dev.redlock.core;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Thrown when a lock could not be acquired within the wait time. {@link #reason()} says
 * why the last attempt failed and the node lists say where.
 */
public class LockNotAcquiredException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/** Why the last attempt failed. */
	public enum Reason {

		/** Another owner holds the lock on enough nodes that no quorum was possible. */
		CONTENDED,

		/**
		 * Too few nodes could be counted to form a quorum: down, timed out, answering
		 * with errors, or in quarantine (restarted, created, stepped their clock or lost
		 * data less than the restart quarantine ago: they may have forgotten locks).
		 */
		NO_QUORUM,

		/**
		 * A quorum was reached, but so slowly that no validity was left after the clock
		 * drift allowance: the TTL is too short for these nodes.
		 */
		VALIDITY_EXHAUSTED,

		/** The waiting thread was interrupted; its interrupt flag is set again. */
		INTERRUPTED

	}

	private final String resource;

	private final Reason reason;

	private final int attempts;

	private final Duration waited;

	private final List<String> heldElsewhere;

	private final List<String> failedNodes;

	/**
	 * Creates the exception.
	 * @param resource the lock's resource name
	 * @param reason why the last attempt failed
	 * @param attempts how many attempts were made
	 * @param waited how long the caller waited in all
	 * @param heldElsewhere nodes (without credentials) that answered that the lock is
	 * taken
	 * @param failedNodes nodes (without credentials) that could not grant it, each with a
	 * short cause
	 * @param cause the underlying failure, if any
	 */
	public LockNotAcquiredException(String resource, Reason reason, int attempts, Duration waited,
			List<String> heldElsewhere, List<String> failedNodes, @Nullable Throwable cause) {
		super(message(resource, reason, attempts, waited, heldElsewhere, failedNodes), cause);
		this.resource = resource;
		this.reason = reason;
		this.attempts = attempts;
		this.waited = waited;
		this.heldElsewhere = List.copyOf(heldElsewhere);
		this.failedNodes = List.copyOf(failedNodes);
	}

	private static String message(String resource, Reason reason, int attempts, Duration waited,
			List<String> heldElsewhere, List<String> failedNodes) {
		StringBuilder message = new StringBuilder("Lock '").append(resource)
			.append("' not acquired after ")
			.append(attempts)
			.append((attempts == 1) ? " attempt" : " attempts")
			.append(" in ")
			.append(waited.toMillis())
			.append(" ms: ");
		message.append(switch (reason) {
			case CONTENDED -> "held by another owner";
			case NO_QUORUM -> "a quorum of nodes could not be reached";
			case VALIDITY_EXHAUSTED -> "a quorum answered too late, no validity was left (TTL too short?)";
			case INTERRUPTED -> "interrupted while waiting";
		});
		if (!heldElsewhere.isEmpty()) {
			message.append("; taken on ").append(heldElsewhere);
		}
		if (!failedNodes.isEmpty()) {
			message.append("; failed on ").append(failedNodes);
		}
		return message.toString();
	}

	/**
	 * Returns the resource that could not be locked.
	 * @return the resource name, without the key prefix
	 */
	public String resource() {
		return this.resource;
	}

	/**
	 * Returns why the last attempt failed.
	 * @return the reason
	 */
	public Reason reason() {
		return this.reason;
	}

	/**
	 * Returns how many attempts were made.
	 * @return at least 1, or 0 when interrupted before the first
	 */
	public int attempts() {
		return this.attempts;
	}

	/**
	 * Returns how long the caller waited in all.
	 * @return the time from the call to the exception
	 */
	public Duration waited() {
		return this.waited;
	}

	/**
	 * Returns the nodes that answered, in the last attempt, that the lock is held by
	 * another owner.
	 * @return node addresses without credentials
	 */
	public List<String> heldElsewhere() {
		return this.heldElsewhere;
	}

	/**
	 * Returns the nodes that failed in the last attempt, each with a short cause, e.g.
	 * {@code redis://10.0.0.5:6379 (timeout)}.
	 * @return node descriptions without credentials
	 */
	public List<String> failedNodes() {
		return this.failedNodes;
	}

}
