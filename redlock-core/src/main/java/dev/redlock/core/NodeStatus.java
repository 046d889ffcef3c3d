package dev.redlock.core;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * The result of checking one node with {@link Redlock#checkNodes()}.
 *
 * @param node the node's address without credentials
 * @param reachable whether it answered within the node timeout
 * @param latency time until its answer was read (or until it gave up)
 * @param version its {@code redis_version}, when reachable; on Valkey, which reports
 * {@code redis_version} 7.2.4 whatever its version, {@code valkey} and its
 * {@code valkey_version} (e.g. {@code valkey 9.1.2})
 * @param role its replication role ({@code master}, or {@code slave} for a replica, which
 * should not be listed as a Redlock node), when reachable
 * @param uptime its {@code uptime_in_seconds}, when reachable
 * @param quarantineRemaining how long it still does not count towards a quorum because it
 * may have forgotten locks ({@link RedlockSettings#restartQuarantine()}); zero when it
 * counts
 * @param quarantineReason why it is in quarantine, {@code null} when it counts
 * @param clockOff whether its clock was found further from the other nodes' than the
 * clock tolerance ({@link RedlockSettings#clockTolerance()}) allows: its time
 * synchronisation needs fixing
 * @param error why it could not be checked, when not reachable
 * @param lockCommands what releases and extensions run on it, when reachable:
 * {@code scripts} (Lua), {@code delex} (Redis 8.4+) or {@code delifeq} (Valkey 9+), as
 * the greetings of its connections found
 * @param kind what the voter is: {@code standalone} (a master at a fixed address),
 * {@code sentinel} (the master a Sentinel group names, followed through failovers) or
 * {@code cluster} (one shard of a cluster voter, its primary followed through failovers)
 * @param master the {@code host:port} of the voter's master as known now (for a Sentinel
 * voter, where the last failover left it; for a cluster voter's shard, its primary), or
 * {@code null} while not known
 * @param voter the index of the node's voter as configured ({@code nodes[i]}): a cluster
 * voter has one status per shard, each with the voter's index
 */
public record NodeStatus(String node, boolean reachable, Duration latency, @Nullable String version,
		@Nullable String role, @Nullable Duration uptime, Duration quarantineRemaining,
		@Nullable QuarantineReason quarantineReason, boolean clockOff, @Nullable String error,
		@Nullable String lockCommands, String kind, @Nullable String master, int voter) {

	/**
	 * Returns whether the node's grants count towards a quorum now: a reachable master
	 * out of restart quarantine.
	 * @return {@code true} if it counts
	 */
	public boolean counts() {
		return isMaster() && this.quarantineRemaining.isZero();
	}

	/**
	 * Returns whether the node is a master, the only role that may take part in Redlock.
	 * @return {@code true} for a reachable master
	 */
	public boolean isMaster() {
		return this.reachable && "master".equals(this.role);
	}

}
