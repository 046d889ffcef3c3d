package dev.redlock.core;

import java.time.Duration;

/**
 * Tuning of a {@link Redlock}. Every value is checked when the record is created.
 *
 * @param keyPrefix prefix put in front of every resource name to form the Redis key
 * @param defaultTtl lock time-to-live used when a caller gives none
 * @param defaultWaitTime how long {@link Redlock#acquire(String)} keeps retrying a contended lock
 * @param retryDelay mean delay before a waiting thread tries again when no release was announced (a holder that
 * died, a lost notice, a node down); each delay is drawn at random from half to one and a half times this value. A
 * release wakes the waiter at once
 * @param nodeTimeout bound on one round trip to the nodes (connect, write, read); much smaller than any TTL
 * @param clockDriftFactor part of the TTL reserved for clock drift between processes; the drift allowance is
 * {@code ttl * clockDriftFactor + 2 ms}
 * @param maxExtensions how many times one lease may be extended by {@link Lease#extend} calls; automatic renewal is
 * bounded by {@code maxHold} instead
 * @param poolMaxTotal most connections open to one node at once
 * @param poolMaxIdle most idle connections kept open to one node
 * @param clientName name given to every connection ({@code CLIENT SETNAME}), or empty for none
 * @param restartQuarantine how long a node that restarted (short uptime, or a new {@code run_id}) does not count
 * towards a quorum, so that it cannot help a second holder to a lock it forgot; also the longest TTL a lock may
 * have; zero turns quarantine off (then run Redis with {@code appendfsync always})
 * @param maxKeyLength longest lock key accepted, in UTF-8 bytes, counting the key prefix and the resource name;
 * longer ones are refused with an {@link IllegalArgumentException} before any network call
 * @param maxHold longest time a lease is kept alive by automatic renewal
 * @param autoRenew whether leases are renewed automatically while held, when the caller does not say
 */
public record RedlockSettings(String keyPrefix, Duration defaultTtl, Duration defaultWaitTime, Duration retryDelay, Duration nodeTimeout, double clockDriftFactor, int maxExtensions, int poolMaxTotal, int poolMaxIdle, String clientName, Duration restartQuarantine, int maxKeyLength, Duration maxHold, boolean autoRenew) {

	/** Fixed part of the drift allowance, as in the Redlock reference implementations. */
	static final Duration DRIFT_BASE = Duration.ofMillis(2);

	/**
	 * Checks the values.
	 */
	public RedlockSettings {
		require(keyPrefix != null, "keyPrefix", "must not be null");
		require(!keyPrefix.startsWith(LockScripts.FENCE_KEY_PREFIX), "keyPrefix", "must not start with "
				+ LockScripts.FENCE_KEY_PREFIX + ", which is reserved for fencing counters, was '" + keyPrefix + "'");
		requirePositive(defaultTtl, "defaultTtl");
		require(defaultWaitTime != null && !defaultWaitTime.isNegative(), "defaultWaitTime",
				"must be zero or positive, was " + defaultWaitTime);
		requirePositive(retryDelay, "retryDelay");
		requirePositive(nodeTimeout, "nodeTimeout");
		require(nodeTimeout.toMillis() >= 1 && nodeTimeout.toMillis() <= Integer.MAX_VALUE, "nodeTimeout",
				"must be between 1 ms and " + Integer.MAX_VALUE + " ms, was " + nodeTimeout);
		require(clockDriftFactor >= 0 && clockDriftFactor < 1, "clockDriftFactor",
				"must be at least 0 and below 1, was " + clockDriftFactor);
		require(maxExtensions >= 0, "maxExtensions", "must not be negative, was " + maxExtensions);
		require(poolMaxTotal >= 1, "poolMaxTotal", "must be at least 1, was " + poolMaxTotal);
		require(poolMaxIdle >= 0, "poolMaxIdle", "must not be negative, was " + poolMaxIdle);
		require(clientName != null && clientName.chars().allMatch((c) -> c > ' ' && c <= '~'), "clientName",
				"must be printable ASCII without spaces, was '" + clientName + "'");
		require(defaultTtl.compareTo(drift(defaultTtl, clockDriftFactor)) > 0, "defaultTtl",
				"must be longer than the clock drift allowance");
		require(restartQuarantine != null && !restartQuarantine.isNegative(), "restartQuarantine",
				"must be zero (off) or positive, was " + restartQuarantine);
		require(restartQuarantine.isZero() || defaultTtl.compareTo(restartQuarantine) <= 0, "defaultTtl",
				"must not exceed restartQuarantine (" + restartQuarantine + "), was " + defaultTtl
						+ "; a node that restarted could forget a lock that others still count");
		require(maxKeyLength >= 1, "maxKeyLength", "must be at least 1, was " + maxKeyLength);
		requirePositive(maxHold, "maxHold");
	}

	/**
	 * Returns the defaults: prefix {@code redlock:}, TTL 30 s, wait 5 s, retry delay 100 ms, node timeout 100 ms,
	 * drift factor 0.01, 100 extensions, at most 64 connections and 16 idle ones per node, client name
	 * {@code redlock}, restart quarantine 60 s, keys up to 1,024 bytes, automatic renewal off and bounded to 10 min.
	 * @return the default settings
	 */
	public static RedlockSettings defaults() {
		return new RedlockSettings("redlock:", Duration.ofSeconds(30), Duration.ofSeconds(5), Duration.ofMillis(100), Duration.ofMillis(100), 0.01, 100, 64, 16, "redlock", Duration.ofSeconds(60), 1024, Duration.ofMinutes(10), false);
	}

	/**
	 * Returns a copy with another keyPrefix.
	 * @param keyPrefix the new value
	 * @return a copy
	 */
	public RedlockSettings withKeyPrefix(String keyPrefix) {
		return new RedlockSettings(keyPrefix, this.defaultTtl, this.defaultWaitTime, this.retryDelay, this.nodeTimeout, this.clockDriftFactor, this.maxExtensions, this.poolMaxTotal, this.poolMaxIdle, this.clientName, this.restartQuarantine, this.maxKeyLength, this.maxHold, this.autoRenew);
	}

	/**
	 * Returns a copy with another defaultTtl.
	 * @param defaultTtl the new value
	 * @return a copy
	 */
	public RedlockSettings withDefaultTtl(Duration defaultTtl) {
		return new RedlockSettings(this.keyPrefix, defaultTtl, this.defaultWaitTime, this.retryDelay, this.nodeTimeout, this.clockDriftFactor, this.maxExtensions, this.poolMaxTotal, this.poolMaxIdle, this.clientName, this.restartQuarantine, this.maxKeyLength, this.maxHold, this.autoRenew);
	}

	/**
	 * Returns a copy with another defaultWaitTime.
	 * @param defaultWaitTime the new value
	 * @return a copy
	 */
	public RedlockSettings withDefaultWaitTime(Duration defaultWaitTime) {
		return new RedlockSettings(this.keyPrefix, this.defaultTtl, defaultWaitTime, this.retryDelay, this.nodeTimeout, this.clockDriftFactor, this.maxExtensions, this.poolMaxTotal, this.poolMaxIdle, this.clientName, this.restartQuarantine, this.maxKeyLength, this.maxHold, this.autoRenew);
	}

	/**
	 * Returns a copy with another retryDelay.
	 * @param retryDelay the new value
	 * @return a copy
	 */
	public RedlockSettings withRetryDelay(Duration retryDelay) {
		return new RedlockSettings(this.keyPrefix, this.defaultTtl, this.defaultWaitTime, retryDelay, this.nodeTimeout, this.clockDriftFactor, this.maxExtensions, this.poolMaxTotal, this.poolMaxIdle, this.clientName, this.restartQuarantine, this.maxKeyLength, this.maxHold, this.autoRenew);
	}

	/**
	 * Returns a copy with another nodeTimeout.
	 * @param nodeTimeout the new value
	 * @return a copy
	 */
	public RedlockSettings withNodeTimeout(Duration nodeTimeout) {
		return new RedlockSettings(this.keyPrefix, this.defaultTtl, this.defaultWaitTime, this.retryDelay, nodeTimeout, this.clockDriftFactor, this.maxExtensions, this.poolMaxTotal, this.poolMaxIdle, this.clientName, this.restartQuarantine, this.maxKeyLength, this.maxHold, this.autoRenew);
	}

	/**
	 * Returns a copy with another clockDriftFactor.
	 * @param clockDriftFactor the new value
	 * @return a copy
	 */
	public RedlockSettings withClockDriftFactor(double clockDriftFactor) {
		return new RedlockSettings(this.keyPrefix, this.defaultTtl, this.defaultWaitTime, this.retryDelay, this.nodeTimeout, clockDriftFactor, this.maxExtensions, this.poolMaxTotal, this.poolMaxIdle, this.clientName, this.restartQuarantine, this.maxKeyLength, this.maxHold, this.autoRenew);
	}

	/**
	 * Returns a copy with another maxExtensions.
	 * @param maxExtensions the new value
	 * @return a copy
	 */
	public RedlockSettings withMaxExtensions(int maxExtensions) {
		return new RedlockSettings(this.keyPrefix, this.defaultTtl, this.defaultWaitTime, this.retryDelay, this.nodeTimeout, this.clockDriftFactor, maxExtensions, this.poolMaxTotal, this.poolMaxIdle, this.clientName, this.restartQuarantine, this.maxKeyLength, this.maxHold, this.autoRenew);
	}

	/**
	 * Returns a copy with another clientName.
	 * @param clientName the new value
	 * @return a copy
	 */
	public RedlockSettings withClientName(String clientName) {
		return new RedlockSettings(this.keyPrefix, this.defaultTtl, this.defaultWaitTime, this.retryDelay, this.nodeTimeout, this.clockDriftFactor, this.maxExtensions, this.poolMaxTotal, this.poolMaxIdle, clientName, this.restartQuarantine, this.maxKeyLength, this.maxHold, this.autoRenew);
	}

	/**
	 * Returns a copy with another restartQuarantine.
	 * @param restartQuarantine the new value
	 * @return a copy
	 */
	public RedlockSettings withRestartQuarantine(Duration restartQuarantine) {
		return new RedlockSettings(this.keyPrefix, this.defaultTtl, this.defaultWaitTime, this.retryDelay, this.nodeTimeout, this.clockDriftFactor, this.maxExtensions, this.poolMaxTotal, this.poolMaxIdle, this.clientName, restartQuarantine, this.maxKeyLength, this.maxHold, this.autoRenew);
	}

	/**
	 * Returns a copy with another maxKeyLength.
	 * @param maxKeyLength the new value
	 * @return a copy
	 */
	public RedlockSettings withMaxKeyLength(int maxKeyLength) {
		return new RedlockSettings(this.keyPrefix, this.defaultTtl, this.defaultWaitTime, this.retryDelay, this.nodeTimeout, this.clockDriftFactor, this.maxExtensions, this.poolMaxTotal, this.poolMaxIdle, this.clientName, this.restartQuarantine, maxKeyLength, this.maxHold, this.autoRenew);
	}

	/**
	 * Returns a copy with another maxHold.
	 * @param maxHold the new value
	 * @return a copy
	 */
	public RedlockSettings withMaxHold(Duration maxHold) {
		return new RedlockSettings(this.keyPrefix, this.defaultTtl, this.defaultWaitTime, this.retryDelay, this.nodeTimeout, this.clockDriftFactor, this.maxExtensions, this.poolMaxTotal, this.poolMaxIdle, this.clientName, this.restartQuarantine, this.maxKeyLength, maxHold, this.autoRenew);
	}

	/**
	 * Returns a copy with another autoRenew.
	 * @param autoRenew the new value
	 * @return a copy
	 */
	public RedlockSettings withAutoRenew(boolean autoRenew) {
		return new RedlockSettings(this.keyPrefix, this.defaultTtl, this.defaultWaitTime, this.retryDelay, this.nodeTimeout, this.clockDriftFactor, this.maxExtensions, this.poolMaxTotal, this.poolMaxIdle, this.clientName, this.restartQuarantine, this.maxKeyLength, this.maxHold, autoRenew);
	}

	/**
	 * Returns a copy with other pool sizes.
	 * @param poolMaxTotal most connections per node
	 * @param poolMaxIdle most idle connections per node
	 * @return a copy
	 */
	public RedlockSettings withPool(int poolMaxTotal, int poolMaxIdle) {
		return new RedlockSettings(this.keyPrefix, this.defaultTtl, this.defaultWaitTime, this.retryDelay, this.nodeTimeout, this.clockDriftFactor, this.maxExtensions, poolMaxTotal, poolMaxIdle, this.clientName, this.restartQuarantine, this.maxKeyLength, this.maxHold, this.autoRenew);
	}

	/**
	 * Returns the time reserved for clock drift when locking for the given TTL.
	 * @param ttl the lock's time-to-live
	 * @return {@code ttl * clockDriftFactor + 2 ms}
	 */
	public Duration driftFor(Duration ttl) {
		return drift(ttl, this.clockDriftFactor);
	}

	private static Duration drift(Duration ttl, double factor) {
		return Duration.ofNanos((long) (ttl.toNanos() * factor)).plus(DRIFT_BASE);
	}

	private static void requirePositive(Duration value, String setting) {
		require(value != null && !value.isNegative() && !value.isZero(), setting, "must be positive, was " + value);
	}

	private static void require(boolean condition, String setting, String message) {
		if (!condition) {
			throw new InvalidRedlockConfigurationException(setting, message);
		}
	}

}
