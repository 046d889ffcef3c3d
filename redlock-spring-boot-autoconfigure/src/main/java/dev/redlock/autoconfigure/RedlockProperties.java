package dev.redlock.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.core.Ordered;

/**
 * Configuration properties for Redlock distributed locks.
 */
@ConfigurationProperties("redlock")
public class RedlockProperties {

	/**
	 * Default order of the @DistributedLock advisor: outside @Transactional
	 * and @Cacheable, whose default is lowest.
	 */
	public static final int DEFAULT_INTERCEPTOR_ORDER = Ordered.LOWEST_PRECEDENCE - 100;

	/**
	 * Whether to enable the Redlock auto-configuration.
	 */
	private boolean enabled = true;

	/**
	 * Independent Redis masters, each "redis://[user:password@]host:port[/database]" or
	 * "rediss://..." for TLS. List 3 or 5: a lock needs a majority of them.
	 */
	private List<String> nodes = new ArrayList<>();

	/**
	 * Prefix put in front of every lock key in Redis.
	 */
	private String keyPrefix = "redlock:";

	/**
	 * Lock time-to-live used when @DistributedLock or the caller gives none.
	 */
	private Duration defaultTtl = Duration.ofSeconds(30);

	/**
	 * How long to keep retrying a lock held elsewhere when @DistributedLock or the caller
	 * gives no wait time.
	 */
	private Duration defaultWaitTime = Duration.ofSeconds(5);

	/**
	 * Mean delay before a waiting thread tries again when no release was announced (a
	 * holder that died, a lost notice, a node down); each delay is drawn at random
	 * between half and one and a half times this. A release wakes the waiter at once.
	 */
	private Duration retryDelay = Duration.ofMillis(100);

	/**
	 * Bound on one round trip to the nodes (connect, write, read), much smaller than any
	 * TTL.
	 */
	private Duration nodeTimeout = Duration.ofMillis(100);

	/**
	 * Part of the TTL reserved for clock drift between processes, at least 0 and below 1.
	 * The drift allowance is ttl * factor + 2 ms.
	 */
	private double clockDriftFactor = 0.01;

	/**
	 * How many times one lease may be extended by explicit extension calls. Automatic
	 * renewal is bounded by max-hold instead.
	 */
	private int maxExtensions = 100;

	/**
	 * Name given to every connection (CLIENT SETNAME); empty for none.
	 */
	private String clientName = "redlock";

	/**
	 * Order of the @DistributedLock advisor among other advisors; lower runs further
	 * outside. The default runs outside @Transactional, so the lock covers the commit.
	 */
	private int interceptorOrder = DEFAULT_INTERCEPTOR_ORDER;

	/**
	 * How long a node that restarted (short uptime or a new run_id) does not count
	 * towards a quorum, so it cannot help a second holder to a lock it forgot. Also the
	 * longest TTL a lock may have. 0 turns quarantine off: then run Redis with
	 * "appendfsync always".
	 */
	private Duration restartQuarantine = Duration.ofSeconds(60);

	/**
	 * Longest lock key accepted, in UTF-8 bytes with the key prefix included; longer keys
	 * are refused before any network call.
	 */
	private int maxKeyLength = 1024;

	/**
	 * Longest time a lease is kept alive by automatic renewal.
	 */
	private Duration maxHold = Duration.ofMinutes(10);

	/**
	 * Whether @DistributedLock methods renew their lease automatically while they run,
	 * unless the annotation says.
	 */
	private boolean autoRenew = false;

	/**
	 * Connection pool of each node.
	 */
	private final Pool pool = new Pool();

	/**
	 * TLS for rediss:// nodes.
	 */
	private final Ssl ssl = new Ssl();

	/**
	 * Micrometer Observations of @DistributedLock calls.
	 */
	private final Observation observation = new Observation();

	public Ssl getSsl() {
		return this.ssl;
	}

	public Observation getObservation() {
		return this.observation;
	}

	public Duration getRestartQuarantine() {
		return this.restartQuarantine;
	}

	public void setRestartQuarantine(Duration restartQuarantine) {
		this.restartQuarantine = restartQuarantine;
	}

	public int getMaxKeyLength() {
		return this.maxKeyLength;
	}

	public void setMaxKeyLength(int maxKeyLength) {
		this.maxKeyLength = maxKeyLength;
	}

	public Duration getMaxHold() {
		return this.maxHold;
	}

	public void setMaxHold(Duration maxHold) {
		this.maxHold = maxHold;
	}

	public boolean isAutoRenew() {
		return this.autoRenew;
	}

	public void setAutoRenew(boolean autoRenew) {
		this.autoRenew = autoRenew;
	}

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public List<String> getNodes() {
		return this.nodes;
	}

	public void setNodes(List<String> nodes) {
		this.nodes = nodes;
	}

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public Duration getDefaultTtl() {
		return this.defaultTtl;
	}

	public void setDefaultTtl(Duration defaultTtl) {
		this.defaultTtl = defaultTtl;
	}

	public Duration getDefaultWaitTime() {
		return this.defaultWaitTime;
	}

	public void setDefaultWaitTime(Duration defaultWaitTime) {
		this.defaultWaitTime = defaultWaitTime;
	}

	public Duration getRetryDelay() {
		return this.retryDelay;
	}

	public void setRetryDelay(Duration retryDelay) {
		this.retryDelay = retryDelay;
	}

	public Duration getNodeTimeout() {
		return this.nodeTimeout;
	}

	public void setNodeTimeout(Duration nodeTimeout) {
		this.nodeTimeout = nodeTimeout;
	}

	public double getClockDriftFactor() {
		return this.clockDriftFactor;
	}

	public void setClockDriftFactor(double clockDriftFactor) {
		this.clockDriftFactor = clockDriftFactor;
	}

	public int getMaxExtensions() {
		return this.maxExtensions;
	}

	public void setMaxExtensions(int maxExtensions) {
		this.maxExtensions = maxExtensions;
	}

	public String getClientName() {
		return this.clientName;
	}

	public void setClientName(String clientName) {
		this.clientName = clientName;
	}

	public int getInterceptorOrder() {
		return this.interceptorOrder;
	}

	public void setInterceptorOrder(int interceptorOrder) {
		this.interceptorOrder = interceptorOrder;
	}

	public Pool getPool() {
		return this.pool;
	}

	/**
	 * TLS settings for rediss:// nodes.
	 */
	public static class Ssl {

		/**
		 * Name of the SSL bundle (spring.ssl.bundle.*) whose trust material rediss://
		 * nodes are checked against, with its key material and its options (enabled
		 * protocols and ciphers). When not set, the JVM's default trust store is used.
		 * Host names are always verified.
		 */
		private @Nullable String bundle;

		public @Nullable String getBundle() {
			return this.bundle;
		}

		public void setBundle(@Nullable String bundle) {
			this.bundle = bundle;
		}

	}

	/**
	 * Observation settings of @DistributedLock calls.
	 */
	public static class Observation {

		/**
		 * Whether the observation of a call (and so its span) carries the evaluated lock
		 * key as its high-cardinality "resource" key value. Turn it off when keys hold
		 * personal or business data that must not reach the tracing backend.
		 */
		private boolean includeResource = true;

		public boolean isIncludeResource() {
			return this.includeResource;
		}

		public void setIncludeResource(boolean includeResource) {
			this.includeResource = includeResource;
		}

	}

	/**
	 * Connection pool settings, applied to each node.
	 */
	public static class Pool {

		/**
		 * Most connections open to one node at once; a call that finds none free waits at
		 * most the node timeout.
		 */
		private int maxTotal = 64;

		/**
		 * Most idle connections kept open to one node.
		 */
		private int maxIdle = 16;

		public int getMaxTotal() {
			return this.maxTotal;
		}

		public void setMaxTotal(int maxTotal) {
			this.maxTotal = maxTotal;
		}

		public int getMaxIdle() {
			return this.maxIdle;
		}

		public void setMaxIdle(int maxIdle) {
			this.maxIdle = maxIdle;
		}

	}

}
