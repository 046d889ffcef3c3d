package dev.redlock.annotation;

/**
 * What a {@link DistributedLock @DistributedLock} call does when the lock cannot be
 * acquired within its wait time (held elsewhere, or no quorum of nodes answered).
 * Whichever is chosen, the outcome shows in the {@code redlock.lock} observation's
 * {@code outcome} (and so in its timer, when metrics are on).
 */
public enum OnLocked {

	/** Throw {@link dev.redlock.core.LockNotAcquiredException}; the method is not run. */
	THROW,

	/**
	 * Do not run the method, and return nothing: {@code null}, {@code Optional.empty()},
	 * an empty collection, map or array, or a completed {@code CompletableFuture} of
	 * {@code null}, by the method's return type; nothing for {@code void}. Refused at
	 * startup for a method returning a primitive, which has no "nothing". The choice for
	 * scheduled jobs that must run on one instance at a time.
	 */
	SKIP,

	/**
	 * Run the method named by {@link DistributedLock#fallback()} instead: a method of the
	 * same bean with the same parameter types and a compatible return type, resolved and
	 * checked at startup, called with the same arguments (without any other advice of
	 * that bean).
	 */
	FALLBACK

}
