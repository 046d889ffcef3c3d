package dev.redlock.core;

import java.time.Duration;
import java.util.Locale;

/**
 * Receives what a {@link Redlock} does, for metrics, tracing or logs. Register listeners
 * with {@link Redlock.Builder#listener(RedlockListener)}.
 *
 * <p>
 * Methods are called on the thread that did the work, after it: keep them fast and
 * non-blocking. The replies of an acquisition round are reported before its validity is
 * measured, so the time a listener takes there shortens the lease; replies that the round
 * left to a node's late-reply thread are reported from that thread, in the order the node
 * answers. An exception thrown by a listener is logged and otherwise ignored, so it can
 * never stop an acquisition or a release. Events carry the lock <em>name</em> (bounded:
 * one per annotated method or per call site) as well as the resource (the evaluated key,
 * unbounded: do not use it as a metric tag).
 */
public interface RedlockListener {

	/**
	 * Called once per {@link Redlock#acquire} or {@link Redlock#tryAcquire} call that got
	 * as far as the nodes.
	 * @param event the outcome of all its attempts
	 */
	default void acquireFinished(AcquireEvent event) {
	}

	/**
	 * Called once per released lease.
	 * @param event what the nodes said
	 */
	default void leaseReleased(ReleaseEvent event) {
	}

	/**
	 * Called once per {@link Lease#extend} call.
	 * @param event whether the extension counted
	 */
	default void leaseExtended(ExtendEvent event) {
	}

	/**
	 * Called once per lost lease, on the thread that detected the loss (see
	 * {@link Lease#isLost()}).
	 * @param event why it was lost
	 */
	default void leaseLost(LeaseLostEvent event) {
	}

	/**
	 * Called for every node of every round: acquire, release, extend or a health check.
	 * @param event the node, command, outcome and latency
	 */
	default void nodeRequestFinished(NodeRequestEvent event) {
	}

	/**
	 * Called when a node is found to have possibly forgotten locks it granted, and so
	 * stops counting towards a quorum for a while (or longer than it already did).
	 * @param event the node, why, and for how long
	 */
	default void nodeQuarantined(NodeQuarantineEvent event) {
	}

	/**
	 * The end of an acquisition.
	 *
	 * @param lockName the lock's name (bounded)
	 * @param resource the locked resource (unbounded)
	 * @param outcome how it ended
	 * @param duration from the call to its end, retries included
	 * @param attempts how many rounds were needed
	 * @param validity validity left at the moment of acquisition, zero when not acquired
	 * @param waited how long the lock was waited for: from the call until the attempt
	 * that won began (zero when the first attempt won at once); for a call that failed,
	 * its whole duration
	 */
	record AcquireEvent(String lockName, String resource, AcquireOutcome outcome, Duration duration, int attempts,
			Duration validity, Duration waited) {
	}

	/**
	 * The release of a lease.
	 *
	 * @param lockName the lock's name
	 * @param resource the locked resource
	 * @param outcome what the nodes said
	 * @param heldFor how long the lease was held
	 */
	record ReleaseEvent(String lockName, String resource, ReleaseOutcome outcome, Duration heldFor) {
	}

	/**
	 * An extension attempt.
	 *
	 * @param lockName the lock's name
	 * @param resource the locked resource
	 * @param outcome whether it counted
	 */
	record ExtendEvent(String lockName, String resource, ExtendOutcome outcome) {
	}

	/**
	 * The loss of a lease: from then on, the work done under it may overlap with another
	 * holder's.
	 *
	 * @param lockName the lock's name
	 * @param resource the locked resource
	 * @param reason why it was lost
	 * @param heldFor how long it had been held when the loss was detected
	 */
	record LeaseLostEvent(String lockName, String resource, LossReason reason, Duration heldFor) {
	}

	/**
	 * One node's part in one round.
	 *
	 * @param node the node's {@code host:port}, without credentials
	 * @param command what was asked
	 * @param outcome how it answered
	 * @param duration from the start of the round until its reply was read (replies are
	 * read in the order they arrive)
	 */
	record NodeRequestEvent(String node, NodeCommand command, NodeOutcome outcome, Duration duration) {
	}

	/**
	 * A node put in quarantine: it does not count towards a quorum for a while.
	 *
	 * @param node the node's {@code host:port}, without credentials
	 * @param reason why it may have forgotten locks
	 * @param duration how long it does not count from now
	 */
	record NodeQuarantineEvent(String node, QuarantineReason reason, Duration duration) {
	}

	/** How an acquisition ended. */
	enum AcquireOutcome {

		/** The lock was acquired. */
		ACQUIRED,

		/** Another owner held it until the wait time ran out. */
		CONTENDED,

		/**
		 * Too few nodes could grant it: down, timed out, answering with errors, or in
		 * restart quarantine.
		 */
		NO_QUORUM,

		/** Anything else: interrupted, or a quorum that answered too late. */
		ERROR;

		/**
		 * Returns the outcome as a metric tag value.
		 * @return e.g. {@code no_quorum}
		 */
		public String tag() {
			return name().toLowerCase(Locale.ROOT);
		}

		static AcquireOutcome of(LockNotAcquiredException.Reason reason) {
			return switch (reason) {
				case CONTENDED -> CONTENDED;
				case NO_QUORUM -> NO_QUORUM;
				case VALIDITY_EXHAUSTED, INTERRUPTED -> ERROR;
			};
		}

	}

	/** How an extension ended. */
	enum ExtendOutcome {

		/** A quorum confirmed it within the validity. */
		EXTENDED,

		/** It did not count: too few nodes confirmed, or too late. */
		FAILED,

		/** The lease had expired already; the nodes were not asked. */
		EXPIRED;

		/**
		 * Returns the outcome as a metric tag value.
		 * @return e.g. {@code extended}
		 */
		public String tag() {
			return name().toLowerCase(Locale.ROOT);
		}

	}

	/** What a node was asked. */
	enum NodeCommand {

		/**
		 * {@code SET key value NX PX ttl} (for a fenced lock, a script that also raises
		 * the resource's counter where it sets the key).
		 */
		ACQUIRE,

		/** The compare-and-delete script. */
		RELEASE,

		/** The compare-and-{@code PEXPIRE} script. */
		EXTEND,

		/**
		 * The second round of a fenced acquisition, raising each node's counter to the
		 * token: only when the grants counted differently.
		 */
		FENCE,

		/** A health check ({@code INFO}). */
		PING;

		/**
		 * Returns the command as a metric tag value.
		 * @return e.g. {@code acquire}
		 */
		public String tag() {
			return name().toLowerCase(Locale.ROOT);
		}

	}

	/** How a node answered. */
	enum NodeOutcome {

		/** It granted, released, extended or answered the check. */
		OK,

		/** It answered that the key is someone else's (or gone). */
		REJECTED,

		/** No answer within the node timeout. */
		TIMEOUT,

		/** An error reply, or the connection failed. */
		ERROR;

		/**
		 * Returns the outcome as a metric tag value.
		 * @return e.g. {@code timeout}
		 */
		public String tag() {
			return name().toLowerCase(Locale.ROOT);
		}

	}

}
