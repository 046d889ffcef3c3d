package dev.redlock.core;

import java.util.Locale;

/**
 * Why a node may have forgotten locks it granted, and so does not count towards a quorum
 * for the restart quarantine ({@link RedlockSettings#restartQuarantine()}): every lock it
 * may have forgotten has expired by then. Shown in health, the endpoint, meters and logs.
 */
public enum QuarantineReason {

	/**
	 * The node started recently ({@code uptime_in_seconds}), or another server now
	 * answers at its address (a new {@code run_id}): without persistence it forgot every
	 * key.
	 */
	RESTART,

	/**
	 * The node's wall clock stepped forward (or stands far ahead of the other nodes'):
	 * Redis expires keys by that clock, so our keys expired early there.
	 */
	CLOCK_STEP,

	/**
	 * A replica was promoted in the node's place ({@code master_replid2} in
	 * {@code INFO replication}): replication is asynchronous, so it may lack recent keys.
	 */
	FAILOVER,

	/**
	 * The node lost keys without restarting: its marker key was gone or replaced by a
	 * clean one, or it shows calls of {@code FLUSHALL}, {@code FLUSHDB} or
	 * {@code SWAPDB}, or evicted keys, since its marker was written.
	 */
	DATA_LOSS,

	/**
	 * The node went back to an older state: its marker's epoch is lower than one a client
	 * saw (a restored VM or container snapshot, a reload of an older dump), or it shows a
	 * call of {@code DEBUG} (which reloads a dump) since its marker was written.
	 */
	ROLLBACK,

	/**
	 * The node may evict keys: it has a {@code maxmemory} and a {@code maxmemory-policy}
	 * other than {@code noeviction}, and lock keys carry a TTL, so even a
	 * {@code volatile-*} policy can drop a lock there. It does not count while so
	 * configured, and for the quarantine after.
	 */
	EVICTION;

	/**
	 * Returns the reason as a tag value.
	 * @return e.g. {@code clock_step}
	 */
	public String tag() {
		return name().toLowerCase(Locale.ROOT);
	}

	/**
	 * Returns the reason in words, for logs and health.
	 * @return e.g. {@code clock step}
	 */
	public String words() {
		return tag().replace('_', ' ');
	}

}
