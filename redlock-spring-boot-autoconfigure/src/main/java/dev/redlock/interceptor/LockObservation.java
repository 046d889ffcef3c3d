package dev.redlock.interceptor;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.Lease;
import dev.redlock.core.ReleaseOutcome;

/**
 * The observation of one call of a
 * {@link dev.redlock.annotation.DistributedLock @DistributedLock} method, started by
 * {@link LockObserver#start}. The interceptor calls, in this order: {@link #acquired} or
 * {@link #notAcquired}; if acquired, {@link #releasing} then {@link #released} or
 * {@link #releaseFailed}; finally {@link #finished}, always.
 */
public interface LockObservation {

	/** Observes nothing. */
	LockObservation NONE = new LockObservation() {
	};

	/**
	 * The lock was acquired; the method runs next.
	 * @param lease the lease
	 */
	default void acquired(Lease lease) {
	}

	/**
	 * The lock was not acquired (or acquiring it failed); the method does not run.
	 * @param failure why, usually a {@link dev.redlock.core.LockNotAcquiredException}
	 */
	default void notAcquired(Throwable failure) {
	}

	/**
	 * The lock was not acquired and the call was skipped
	 * ({@link dev.redlock.annotation.OnLocked#SKIP}); follows {@link #notAcquired}.
	 */
	default void skipped() {
	}

	/**
	 * The lock was not acquired and the fallback method runs instead
	 * ({@link dev.redlock.annotation.OnLocked#FALLBACK}); follows {@link #notAcquired}.
	 */
	default void fellBack() {
	}

	/**
	 * The method has returned on the calling thread, but the call goes on (its
	 * {@code CompletionStage} or publisher has not completed): whatever was put in scope
	 * on the calling thread for the call must be taken out now, on this thread.
	 * {@link #finished} follows later, possibly on another thread.
	 */
	default void leaveScope() {
	}

	/** The method has returned or thrown; the lease is released next. */
	default void releasing() {
	}

	/**
	 * The lease was released.
	 * @param outcome what the nodes said
	 */
	default void released(ReleaseOutcome outcome) {
	}

	/**
	 * Releasing the lease threw; it expires at the end of its TTL.
	 * @param failure what was thrown
	 */
	default void releaseFailed(RuntimeException failure) {
	}

	/**
	 * The call is over.
	 * @param failure what the call throws, or {@code null} if it returns normally
	 */
	default void finished(@Nullable Throwable failure) {
	}

}
