package dev.redlock.autoconfigure;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.core.Ordered;

import dev.redlock.core.RedlockSettings;

/**
 * Configuration properties for Redlock distributed locks.
 *
 * @param enabled Whether to enable the Redlock auto-configuration.
 * @param nodes The voters, each an independent Redis master: at a fixed address,
 * "redis://[user:password@]host:port[/database]" ("rediss://..." for TLS), or named by a
 * Sentinel group and followed through its failovers,
 * "redis-sentinel://[user:password@]sentinel1:port,sentinel2:port[/database]#masterName"
 * ("rediss-sentinel://..." for TLS; the credentials are the master's, and the sentinels'
 * if they ask for a password and redlock.sentinel.password is not set; "?waitReplicas=n"
 * before the master's name counts a write there only once n replicas acknowledged it, so
 * that a promotion costs that voter no quarantine), or a whole Redis or Valkey Cluster,
 * "redis-cluster://[user:password@]seed1:port,seed2:port" ("rediss-cluster://..." for
 * TLS), one voter whose shards are read from its slot map at startup (counting as down
 * when no seed answers then); "?shards=k" after the seeds says how many shards it has, so
 * that all are followed once it answers. List 3 or 5: a lock needs a majority of them.
 * @param keyPrefix Prefix put in front of every lock key in Redis.
 * @param defaultTtl Lock time-to-live used when @DistributedLock or the caller gives
 * none.
 * @param defaultWaitTime How long to keep retrying a lock held elsewhere when the caller
 * or its @DistributedLock gives no wait time.
 * @param retryDelay Mean delay before a waiting thread tries again when no release was
 * announced (a holder that died, a lost notice, a node down); each delay is drawn at
 * random between half and one and a half times this. A release wakes the waiter at once.
 * @param nodeTimeout Bound on one round trip to the nodes (connect, write, read), much
 * smaller than any TTL.
 * @param clockDriftFactor Part of the TTL reserved for clock drift between processes, at
 * least 0 and below 1. The drift allowance is ttl * factor + 2 ms, plus 3 *
 * clock-tolerance while the restart quarantine is on.
 * @param maxExtensions How many times one lease may be extended by explicit extension
 * calls. Automatic renewal is bounded by max-hold instead.
 * @param clientName Name given to every connection (CLIENT SETNAME); empty for none.
 * @param interceptorOrder Order of the @DistributedLock advisor among other advisors;
 * lower runs further outside. The default runs outside @Transactional, so the lock covers
 * the commit.
 * @param restartQuarantine How long a node that may have forgotten locks (it restarted,
 * its clock stepped, it went back to an older state, it lost or may evict keys, a replica
 * replaced it) does not count towards a quorum, so it cannot help a second holder to a
 * lock it forgot. Nodes created or restarted less than this long ago count only once it
 * has passed: with all nodes just created, no lock can be had for that long (use 0s for
 * nodes of a development machine or a test). Also the longest TTL a lock may have on the
 * nodes. 0 turns quarantine and every detector off: then run Redis with "appendfsync
 * always".
 * @param clockTolerance How far apart the nodes' clocks may read and still agree, while
 * the restart quarantine is on: their synchronisation error plus the time a round takes
 * to read them. A node whose clock is not proven within it of the others' does not count
 * in that round; one proven further off is quarantined as a clock step. Every lock's
 * drift allowance grows by 3 times it. Raise it for nodes far away (cross-region round
 * trips) or loosely synchronised clocks.
 * @param maxKeyLength Longest lock key accepted, in UTF-8 bytes with the key prefix
 * included; longer keys are refused before any network call.
 * @param maxHold Longest time a lease is kept alive by automatic renewal.
 * @param autoRenew Whether @DistributedLock methods renew their lease automatically while
 * they run, unless the annotation says.
 * @param transport How lock rounds reach each node: "pipelined" (the default) shares one
 * connection per node among the calling threads while many lock at once (8 or more rounds
 * underway) and sends their commands together, else lends each round a pooled connection;
 * "shared" shares it for every round; "pooled" never. Renewal batches and clean-up always
 * use pooled connections.
 * @param pool Connection pool of each node.
 * @param ssl TLS for rediss:// nodes.
 * @param observation Micrometer Observations of @DistributedLock calls.
 * @param sentinel Credentials of the sentinels of every Sentinel voter.
 */
@ConfigurationProperties("redlock")
public record RedlockProperties(@DefaultValue("true") boolean enabled, @DefaultValue List<String> nodes,
		@DefaultValue("redlock:") String keyPrefix, @DefaultValue("30s") Duration defaultTtl,
		@DefaultValue("5s") Duration defaultWaitTime, @DefaultValue("100ms") Duration retryDelay,
		@DefaultValue("100ms") Duration nodeTimeout, @DefaultValue("0.01") double clockDriftFactor,
		@DefaultValue("100") int maxExtensions, @DefaultValue("redlock") String clientName,
		@DefaultValue("" + RedlockProperties.DEFAULT_INTERCEPTOR_ORDER) int interceptorOrder,
		@DefaultValue("60s") Duration restartQuarantine, @DefaultValue("1024") int maxKeyLength,
		@DefaultValue("10m") Duration maxHold, boolean autoRenew, @DefaultValue("50ms") Duration clockTolerance,
		@DefaultValue("pipelined") RedlockSettings.Transport transport, @DefaultValue Pool pool, @DefaultValue Ssl ssl,
		@DefaultValue Observation observation, @DefaultValue Sentinel sentinel) {

	/**
	 * Default order of the @DistributedLock advisor: outside @Transactional
	 * and @Cacheable, whose default is lowest.
	 */
	public static final int DEFAULT_INTERCEPTOR_ORDER = Ordered.LOWEST_PRECEDENCE - 100;

	/**
	 * Credentials of the sentinels of every Sentinel voter (redis-sentinel://), for
	 * sentinels protected by a password of their own.
	 *
	 * @param username ACL user the sentinels are asked as; the default user when not set.
	 * @param password Password of the sentinels. When not set, they are asked without
	 * credentials, or with the voter's user and password once one answers NOAUTH.
	 */
	public record Sentinel(@Nullable String username, @Nullable String password) {

		@Override
		public String toString() {
			return "Sentinel[username=" + this.username + ", password=" + ((this.password != null) ? "****" : null)
					+ "]";
		}

	}

	/**
	 * TLS settings for rediss:// nodes.
	 *
	 * @param bundle Name of the SSL bundle (spring.ssl.bundle.*) whose trust material
	 * rediss:// nodes are checked against, with its key material and its options (enabled
	 * protocols and ciphers). When not set, the JVM's default trust store is used. Host
	 * names are always verified.
	 */
	public record Ssl(@Nullable String bundle) {
	}

	/**
	 * Observation settings of @DistributedLock calls.
	 *
	 * @param includeResource Whether the observation of a call (and so its span) carries
	 * the evaluated lock key as its high-cardinality "resource" key value. Turn it off
	 * when keys hold personal or business data that must not reach the tracing backend.
	 */
	public record Observation(@DefaultValue("true") boolean includeResource) {
	}

	/**
	 * Connection pool settings, applied to each node.
	 *
	 * @param maxTotal Most connections open to one node at once; a call that finds none
	 * free waits at most the node timeout.
	 * @param maxIdle Most idle connections kept open to one node. Below the number of
	 * threads that lock at once, connections are closed and opened again all the time.
	 * @param minIdle Connections to each node opened in the background as soon as the
	 * application starts, before it reports ready, and kept open even when idle (at most
	 * max-idle), so that the first calls after a deploy find them ready. 0 opens every
	 * connection on demand.
	 */
	public record Pool(@DefaultValue("64") int maxTotal, @DefaultValue("64") int maxIdle,
			@DefaultValue("8") int minIdle) {
	}

}
