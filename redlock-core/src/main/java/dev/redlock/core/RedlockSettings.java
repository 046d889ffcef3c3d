package dev.redlock.core;

import java.time.Duration;

/**
 * Tuning of a {@link Redlock}. Every value is checked when the record is created.
 *
 * @param keyPrefix prefix put in front of every resource name to form the Redis key
 * @param defaultTtl lock time-to-live used when a caller gives none
 * @param defaultWaitTime how long {@link Redlock#acquire(String)} keeps retrying a
 * contended lock
 * @param retryDelay mean delay before a waiting thread tries again when no release was
 * announced (a holder that died, a lost notice, a node down); each delay is drawn at
 * random from half to one and a half times this value. A release wakes the waiter at once
 * @param nodeTimeout bound on one round trip to the nodes (connect, write, read); much
 * smaller than any TTL
 * @param clockDriftFactor part of the TTL reserved for clock drift between processes; the
 * drift allowance is {@code ttl * clockDriftFactor + 2 ms}
 * @param maxExtensions how many times one lease may be extended by {@link Lease#extend}
 * calls; automatic renewal is bounded by {@code maxHold} instead
 * @param poolMaxTotal most connections open to one node at once
 * @param poolMaxIdle most idle connections kept open to one node
 * @param poolMinIdle connections to each node opened in the background as soon as the
 * {@code Redlock} is built, and kept open even when idle (at most {@code poolMaxIdle});
 * zero opens each connection on demand
 * @param clientName name given to every connection ({@code CLIENT SETNAME}), or empty for
 * none
 * @param restartQuarantine how long a node that may have forgotten locks it granted (a
 * restart: short uptime or a new {@code run_id}; a forward step of its clock; a replica
 * promoted in its place; a loss of data) does not count towards a quorum, from the moment
 * the cause is seen, so that it cannot help a second holder to a lock it forgot; nodes
 * created less than this ago are quarantined too; also the longest TTL a lock may have;
 * zero turns quarantine off (then run Redis with {@code appendfsync always})
 * @param maxKeyLength longest lock key accepted, in UTF-8 bytes, counting the key prefix
 * and the resource name; longer ones are refused with an {@link IllegalArgumentException}
 * before any network call
 * @param maxHold longest time a lease is kept alive by automatic renewal
 * @param autoRenew whether leases are renewed automatically while held, when the caller
 * does not say
 * @param clockTolerance how far apart the nodes' clocks may read and still agree, with
 * the restart quarantine on: a node's grant counts only when its clock, read with the
 * grant, is proven within this of the other nodes' (their synchronisation error plus the
 * time the round took to read it), and a node proven further off is quarantined as a
 * clock step; the clocks of the nodes must agree within half of it. A step within it goes
 * unseen, so the drift allowance of every lock grows by three times it
 * @param transport how rounds reach each node: over one connection per node shared by the
 * callers whose rounds overlap, their commands sent together
 * ({@link Transport#PIPELINED}), by every round ({@link Transport#SHARED}), or over
 * connections lent from the pool to one caller at a time ({@link Transport#POOLED})
 */
public record RedlockSettings(String keyPrefix, Duration defaultTtl, Duration defaultWaitTime, Duration retryDelay,
		Duration nodeTimeout, double clockDriftFactor, int maxExtensions, int poolMaxTotal, int poolMaxIdle,
		int poolMinIdle, String clientName, Duration restartQuarantine, int maxKeyLength, Duration maxHold,
		boolean autoRenew, Duration clockTolerance, Transport transport) {

	/**
	 * What the keys of the fencing counters start with: no lock key may (the lock scripts
	 * use the same prefix).
	 */
	static final String RESERVED_KEY_PREFIX = "{fence}";

	/** Fixed part of the drift allowance, as in the Redlock reference implementations. */
	static final Duration DRIFT_BASE = Duration.ofMillis(2);

	/**
	 * Checks the values.
	 */
	public RedlockSettings {
		require(keyPrefix != null, "keyPrefix", "must not be null");
		require(!keyPrefix.startsWith(RESERVED_KEY_PREFIX), "keyPrefix", "must not start with " + RESERVED_KEY_PREFIX
				+ ", which is reserved for fencing counters, was '" + keyPrefix + "'");
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
		require(poolMinIdle >= 0, "poolMinIdle", "must not be negative, was " + poolMinIdle);
		require(clientName != null && clientName.chars().allMatch((c) -> c > ' ' && c <= '~'), "clientName",
				"must be printable ASCII without spaces, was '" + clientName + "'");
		require(restartQuarantine != null && !restartQuarantine.isNegative(), "restartQuarantine",
				"must be zero (off) or positive, was " + restartQuarantine);
		requirePositive(clockTolerance, "clockTolerance");
		require(defaultTtl.toNanos() > driftNanos(defaultTtl.toNanos(), clockDriftFactor,
				stepAllowanceNanos(restartQuarantine, clockTolerance)), "defaultTtl",
				"must be longer than the clock drift allowance (" + driftWords(clockDriftFactor, restartQuarantine)
						+ "), was " + defaultTtl);
		require(restartQuarantine.isZero() || defaultTtl.compareTo(restartQuarantine) <= 0, "defaultTtl",
				"must not exceed restartQuarantine (" + restartQuarantine + "), was " + defaultTtl
						+ ": a node that restarted could forget a lock that others still count; lower it, raise "
						+ "restartQuarantine, or keep the TTL short and renew leases while held (autoRenew)");
		require(maxKeyLength >= 1, "maxKeyLength", "must be at least 1, was " + maxKeyLength);
		requirePositive(maxHold, "maxHold");
		require(transport != null, "transport", "must not be null");
	}

	/**
	 * How the rounds of a {@link Redlock} reach each node. Batches (renewals, clean-up)
	 * always use the pool's connections, so that they never queue a lock's round behind
	 * them.
	 */
	public enum Transport {

		/**
		 * While many other rounds are underway (eight or more), a round joins them on one
		 * connection per node shared by every caller: the commands of concurrent rounds
		 * go out together, written by a writer thread per node, and a reader thread per
		 * node hands each reply to its round. Each round keeps its own deadline and early
		 * exit; a node that stops answering has its shared connection replaced. With
		 * fewer, a round goes over a connection lent from the pool, which its caller
		 * reads itself, sooner than a reader thread could hand it the replies. The
		 * default: within the noise of {@link #POOLED} with few threads, and on a 2-core
		 * machine about 1.3 times its throughput with sixteen threads locking at once
		 * (see the benchmarks page).
		 */
		PIPELINED,

		/**
		 * Every round over the shared connection, even a round alone: the fewest
		 * connections (one per node for every round; the pool's serve batches and
		 * clean-up), at the cost of the writer and reader threads' hand-offs for a lone
		 * caller.
		 */
		SHARED,

		/**
		 * A connection per round per node, lent from the pool: the caller writes and
		 * reads it itself, and the releases of many threads at once go out in batches.
		 * The default before {@link #PIPELINED}, kept while that one proves itself.
		 */
		POOLED

	}

	/**
	 * Returns the defaults: prefix {@code redlock:}, TTL 30 s, wait 5 s, retry delay 100
	 * ms, node timeout 100 ms, drift factor 0.01, 100 extensions, at most 64 connections
	 * and 64 idle ones per node, 8 of them opened at once and kept, client name
	 * {@code redlock}, restart quarantine 60 s, keys up to 1,024 bytes, automatic renewal
	 * off and bounded to 10 min, clock tolerance 50 ms, the pooled transport.
	 * @return the default settings
	 */
	public static RedlockSettings defaults() {
		return builder().build();
	}

	/**
	 * Starts building settings from the {@link #defaults() defaults}.
	 * @return a new builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Starts building settings from these.
	 * @return a new builder holding these values
	 */
	public Builder toBuilder() {
		return new Builder(this);
	}

	/**
	 * Returns a copy with another defaultTtl; see {@link Builder#defaultTtl}.
	 * @param defaultTtl the new value
	 * @return a copy
	 */
	public RedlockSettings withDefaultTtl(Duration defaultTtl) {
		return toBuilder().defaultTtl(defaultTtl).build();
	}

	/**
	 * Returns a copy with another retryDelay; see {@link Builder#retryDelay}.
	 * @param retryDelay the new value
	 * @return a copy
	 */
	public RedlockSettings withRetryDelay(Duration retryDelay) {
		return toBuilder().retryDelay(retryDelay).build();
	}

	/**
	 * Returns a copy with another nodeTimeout; see {@link Builder#nodeTimeout}.
	 * @param nodeTimeout the new value
	 * @return a copy
	 */
	public RedlockSettings withNodeTimeout(Duration nodeTimeout) {
		return toBuilder().nodeTimeout(nodeTimeout).build();
	}

	/**
	 * Returns a copy with another clockDriftFactor; see {@link Builder#clockDriftFactor}.
	 * @param clockDriftFactor the new value
	 * @return a copy
	 */
	public RedlockSettings withClockDriftFactor(double clockDriftFactor) {
		return toBuilder().clockDriftFactor(clockDriftFactor).build();
	}

	/**
	 * Returns a copy with another restartQuarantine; see
	 * {@link Builder#restartQuarantine}.
	 * @param restartQuarantine the new value
	 * @return a copy
	 */
	public RedlockSettings withRestartQuarantine(Duration restartQuarantine) {
		return toBuilder().restartQuarantine(restartQuarantine).build();
	}

	/**
	 * Returns a copy with other pool sizes.
	 * @param poolMaxTotal most connections per node
	 * @param poolMaxIdle most idle connections per node
	 * @return a copy
	 */
	public RedlockSettings withPool(int poolMaxTotal, int poolMaxIdle) {
		return toBuilder().poolMaxTotal(poolMaxTotal).poolMaxIdle(poolMaxIdle).build();
	}

	/**
	 * Returns the time reserved for clock drift when locking for the given TTL: the
	 * validity of a lease is its TTL less the time the round took, less this.
	 * @param ttl the lock's time-to-live
	 * @return {@code ttl * clockDriftFactor + 2 ms}, plus {@code 3 × clockTolerance} with
	 * the restart quarantine on (a step of a node's clock that the clock tolerance hides)
	 */
	public Duration driftFor(Duration ttl) {
		return Duration.ofNanos(driftNanosFor(ttl.toNanos()));
	}

	/**
	 * {@link #driftFor} in nanoseconds, without allocating: for every acquisition.
	 */
	public long driftNanosFor(long ttlNanos) {
		return driftNanos(ttlNanos, this.clockDriftFactor,
				stepAllowanceNanos(this.restartQuarantine, this.clockTolerance));
	}

	/**
	 * How much a node's clock can step between two rounds that both clear it: its clock
	 * is within 1.5 tolerances of the honest ones' at each.
	 */
	private static long stepAllowanceNanos(Duration restartQuarantine, Duration clockTolerance) {
		return restartQuarantine.isZero() ? 0 : 3 * clockTolerance.toNanos();
	}

	private static long driftNanos(long ttlNanos, double factor, long stepAllowanceNanos) {
		return (long) (ttlNanos * factor) + DRIFT_BASE.toNanos() + stepAllowanceNanos;
	}

	private static String driftWords(double factor, Duration restartQuarantine) {
		return factor + " × TTL + 2 ms" + (restartQuarantine.isZero() ? "" : " + 3 × clockTolerance");
	}

	private static void requirePositive(Duration value, String setting) {
		require(value != null && !value.isNegative() && !value.isZero(), setting, "must be positive, was " + value);
	}

	private static void require(boolean condition, String setting, String message) {
		if (!condition) {
			throw new InvalidRedlockConfigurationException(setting, message);
		}
	}

	/**
	 * Builds {@link RedlockSettings}, starting from the defaults or from other settings.
	 * The values are checked by {@link #build()}, each failure naming its setting.
	 */
	public static final class Builder {

		private String keyPrefix = "redlock:";

		private Duration defaultTtl = Duration.ofSeconds(30);

		private Duration defaultWaitTime = Duration.ofSeconds(5);

		private Duration retryDelay = Duration.ofMillis(100);

		private Duration nodeTimeout = Duration.ofMillis(100);

		private double clockDriftFactor = 0.01;

		private int maxExtensions = 100;

		private int poolMaxTotal = 64;

		private int poolMaxIdle = 64;

		private int poolMinIdle = 8;

		private String clientName = "redlock";

		private Duration restartQuarantine = Duration.ofSeconds(60);

		private int maxKeyLength = 1024;

		private Duration maxHold = Duration.ofMinutes(10);

		private Duration clockTolerance = Duration.ofMillis(50);

		private boolean autoRenew = false;

		private Transport transport = Transport.PIPELINED;

		private Builder() {
		}

		private Builder(RedlockSettings settings) {
			this.keyPrefix = settings.keyPrefix;
			this.defaultTtl = settings.defaultTtl;
			this.defaultWaitTime = settings.defaultWaitTime;
			this.retryDelay = settings.retryDelay;
			this.nodeTimeout = settings.nodeTimeout;
			this.clockDriftFactor = settings.clockDriftFactor;
			this.maxExtensions = settings.maxExtensions;
			this.poolMaxTotal = settings.poolMaxTotal;
			this.poolMaxIdle = settings.poolMaxIdle;
			this.poolMinIdle = settings.poolMinIdle;
			this.clientName = settings.clientName;
			this.restartQuarantine = settings.restartQuarantine;
			this.maxKeyLength = settings.maxKeyLength;
			this.maxHold = settings.maxHold;
			this.autoRenew = settings.autoRenew;
			this.clockTolerance = settings.clockTolerance;
			this.transport = settings.transport;
		}

		/**
		 * Sets the prefix of every lock key.
		 * @param keyPrefix the value
		 * @return this builder
		 */
		public Builder keyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
			return this;
		}

		/**
		 * Sets the lock time-to-live used when a caller gives none.
		 * @param defaultTtl the value
		 * @return this builder
		 */
		public Builder defaultTtl(Duration defaultTtl) {
			this.defaultTtl = defaultTtl;
			return this;
		}

		/**
		 * Sets how long to wait for a busy lock when a caller does not say.
		 * @param defaultWaitTime the value
		 * @return this builder
		 */
		public Builder defaultWaitTime(Duration defaultWaitTime) {
			this.defaultWaitTime = defaultWaitTime;
			return this;
		}

		/**
		 * Sets the mean delay before a waiting thread tries again when no release was
		 * announced.
		 * @param retryDelay the value
		 * @return this builder
		 */
		public Builder retryDelay(Duration retryDelay) {
			this.retryDelay = retryDelay;
			return this;
		}

		/**
		 * Sets the bound on one round to the nodes.
		 * @param nodeTimeout the value
		 * @return this builder
		 */
		public Builder nodeTimeout(Duration nodeTimeout) {
			this.nodeTimeout = nodeTimeout;
			return this;
		}

		/**
		 * Sets the part of the TTL reserved for clock drift.
		 * @param clockDriftFactor the value
		 * @return this builder
		 */
		public Builder clockDriftFactor(double clockDriftFactor) {
			this.clockDriftFactor = clockDriftFactor;
			return this;
		}

		/**
		 * Sets how many times one lease may be extended explicitly.
		 * @param maxExtensions the value
		 * @return this builder
		 */
		public Builder maxExtensions(int maxExtensions) {
			this.maxExtensions = maxExtensions;
			return this;
		}

		/**
		 * Sets the most connections per node.
		 * @param poolMaxTotal the value
		 * @return this builder
		 */
		public Builder poolMaxTotal(int poolMaxTotal) {
			this.poolMaxTotal = poolMaxTotal;
			return this;
		}

		/**
		 * Sets the most idle connections kept per node.
		 * @param poolMaxIdle the value
		 * @return this builder
		 */
		public Builder poolMaxIdle(int poolMaxIdle) {
			this.poolMaxIdle = poolMaxIdle;
			return this;
		}

		/**
		 * Sets how many connections to each node are opened at once and kept even when
		 * idle (at most the most idle ones); zero opens each on demand.
		 * @param poolMinIdle the value
		 * @return this builder
		 */
		public Builder poolMinIdle(int poolMinIdle) {
			this.poolMinIdle = poolMinIdle;
			return this;
		}

		/**
		 * Sets the {@code CLIENT SETNAME} of every connection, empty for none.
		 * @param clientName the value
		 * @return this builder
		 */
		public Builder clientName(String clientName) {
			this.clientName = clientName;
			return this;
		}

		/**
		 * Sets how long a node that may have forgotten locks (a restart, a clock step, a
		 * failover, a loss of data) does not count towards a quorum, zero for never; also
		 * the longest TTL a lock may have.
		 * @param restartQuarantine the value
		 * @return this builder
		 */
		public Builder restartQuarantine(Duration restartQuarantine) {
			this.restartQuarantine = restartQuarantine;
			return this;
		}

		/**
		 * Sets the longest lock key in UTF-8 bytes, prefix included.
		 * @param maxKeyLength the value
		 * @return this builder
		 */
		public Builder maxKeyLength(int maxKeyLength) {
			this.maxKeyLength = maxKeyLength;
			return this;
		}

		/**
		 * Sets the longest time automatic renewal keeps a lease alive.
		 * @param maxHold the value
		 * @return this builder
		 */
		public Builder maxHold(Duration maxHold) {
			this.maxHold = maxHold;
			return this;
		}

		/**
		 * Sets how far apart the nodes' clocks may read and still agree, with the restart
		 * quarantine on; every lock's drift allowance grows by three times it.
		 * @param clockTolerance the value
		 * @return this builder
		 */
		public Builder clockTolerance(Duration clockTolerance) {
			this.clockTolerance = clockTolerance;
			return this;
		}

		/**
		 * Sets whether leases are renewed while held when the caller does not say.
		 * @param autoRenew the value
		 * @return this builder
		 */
		public Builder autoRenew(boolean autoRenew) {
			this.autoRenew = autoRenew;
			return this;
		}

		/**
		 * Sets how rounds reach each node.
		 * @param transport the value
		 * @return this builder
		 */
		public Builder transport(Transport transport) {
			this.transport = transport;
			return this;
		}

		/**
		 * Returns the settings.
		 * @return the settings
		 * @throws InvalidRedlockConfigurationException naming the first setting whose
		 * value is not allowed
		 */
		public RedlockSettings build() {
			return new RedlockSettings(this.keyPrefix, this.defaultTtl, this.defaultWaitTime, this.retryDelay,
					this.nodeTimeout, this.clockDriftFactor, this.maxExtensions, this.poolMaxTotal, this.poolMaxIdle,
					this.poolMinIdle, this.clientName, this.restartQuarantine, this.maxKeyLength, this.maxHold,
					this.autoRenew, this.clockTolerance, this.transport);
		}

	}

}
