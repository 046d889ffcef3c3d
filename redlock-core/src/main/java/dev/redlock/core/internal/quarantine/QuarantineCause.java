package dev.redlock.core.internal.quarantine;

import dev.redlock.core.QuarantineReason;

/**
 * What was found of a node that may have forgotten locks: why, and what was seen.
 *
 * @param reason why it may have forgotten
 * @param detail what was seen, for the log
 */
record QuarantineCause(QuarantineReason reason, String detail) {

	/**
	 * Whether the node lost keys (its fencing counters too), so that its marker gets a
	 * new generation: not for a clock step or an evicting configuration, which drop keys
	 * by their TTL only.
	 */
	boolean losesData() {
		return this.reason != QuarantineReason.CLOCK_STEP && this.reason != QuarantineReason.EVICTION;
	}

}
