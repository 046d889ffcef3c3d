package dev.redlock.annotation;

/**
 * Whether a {@link DistributedLock @DistributedLock} method renews its lease while it
 * runs.
 */
public enum Renewal {

	/** As {@code redlock.auto-renew} says (off unless configured). */
	DEFAULT,

	/**
	 * Renew a third of the TTL after each (re)validation, until the method returns or
	 * {@code maxHold} is reached.
	 */
	ON,

	/** Never renew: the lease lasts its TTL. */
	OFF

}
