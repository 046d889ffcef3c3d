package dev.redlock.annotation;

/**
 * What a {@link DistributedLock @DistributedLock} method's call does when the method
 * returns after its lease was lost (it expired, or a renewal failed). In both cases the
 * loss is logged at WARN and counted in {@code redlock.lease.lost}, and the lock is
 * released (or left to expire) first.
 */
public enum OnLeaseLost {

	/**
	 * Return the method's result as usual; the WARN log and the meter are the only trace.
	 */
	LOG,

	/**
	 * Throw {@link dev.redlock.core.LeaseLostException} instead of returning the result.
	 * If the method threw, its exception is thrown instead, with the
	 * {@code LeaseLostException} added as suppressed.
	 */
	THROW

}
