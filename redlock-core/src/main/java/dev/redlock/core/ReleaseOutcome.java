package dev.redlock.core;

/**
 * What releasing a {@link Lease} found on the nodes.
 */
public enum ReleaseOutcome {

	/**
	 * The lock still held this lease's value on a quorum of nodes and was deleted there.
	 */
	RELEASED,

	/**
	 * Too few nodes still held this lease's value: the lock had expired (or was taken by
	 * another holder after it expired) before it was released. The work done under it may
	 * have overlapped with another holder's.
	 */
	EXPIRED,

	/**
	 * Too few nodes answered to tell: whatever is left of the lock expires by itself at
	 * the end of its TTL.
	 */
	UNKNOWN

}
