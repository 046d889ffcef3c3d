package dev.redlock.core.internal.waiting;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.AcquireAttempt;

/**
 * How a thread's wait for a lock ended ({@link LockWaiters#acquire}): the last attempt,
 * if any, and why.
 *
 * @param last the last attempt made, {@code null} if none (the deadline passed in the
 * queue)
 * @param attempts how many attempts were made
 * @param wake why it ended: {@link Wake#TRY} when won, else the deadline, an interrupt or
 * the close
 * @param queued whether the thread had to wait in the queue (else its first attempt, made
 * at once, ended it)
 */
public record WaitOutcome(@Nullable AcquireAttempt last, int attempts, Wake wake, boolean queued) {

	/** Why a waiting thread woke. */
	public enum Wake {

		/** Its turn, and a reason to try: a release, or the retry delay has passed. */
		TRY,

		/** The deadline passed. */
		DEADLINE,

		/** The thread was interrupted (its flag is still set). */
		INTERRUPTED,

		/** The {@code Redlock} was closed. */
		CLOSED

	}

}
