package dev.redlock.health;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import dev.redlock.core.NodeStatus;
import dev.redlock.core.QuarantineReason;
import dev.redlock.core.Redlock;

/**
 * Health of the Redis nodes of a {@link Redlock}: {@code UP} while at least a quorum of
 * voters answer as masters and count towards a quorum, {@code OUT_OF_SERVICE} when enough
 * masters answer but some of them are in quarantine (they may have forgotten locks: a
 * restart, a clock step, a failover, a loss of data; locks cannot be acquired until the
 * quarantine ends), {@code DOWN} otherwise. A cluster voter is one node per shard; it
 * answers and counts when every one of its shards does, so that {@code UP} means every
 * lock can be had (a shard in quarantine costs only the locks of its slots, but the voter
 * is not counted meanwhile).
 *
 * <p>
 * Every node is checked at once with one {@code INFO} round
 * ({@link Redlock#checkNodes()}), which gives up on a node after the node timeout; a
 * check therefore never takes much longer than the node timeout, however many nodes are
 * down or frozen. The details are:
 * <ul>
 * <li>{@code quorum}: how many nodes must agree for a lock to be held;</li>
 * <li>{@code reachable}: how many voters answered as masters;</li>
 * <li>{@code counting}: how many of those count towards a quorum now (not in restart
 * quarantine), the number compared with the quorum;</li>
 * <li>{@code reason}, when {@code OUT_OF_SERVICE}: how many nodes are in quarantine, for
 * how long no lock can be acquired, and what to do about nodes created just now;</li>
 * <li>{@code nodes}: per node, in configuration order, {@code node} (its address without
 * credentials; a cluster voter's shard with its slots), {@code kind}, {@code master},
 * {@code voter} (the index in {@code redlock.nodes}, when some voter is a cluster),
 * {@code reachable}, {@code latencyMs}, and when it answered {@code version},
 * {@code role} and {@code uptimeSeconds}, or when it did not {@code error}; a node in
 * quarantine also has {@code quarantineRemainingMs}, how long until it counts again, and
 * {@code quarantineReason} ({@code restart}, {@code clock_step}, {@code failover} or
 * {@code data_loss}): why it may have forgotten locks. A node that answered in a role
 * other than {@code master} (a replica listed as a node) carries a {@code problem}: it is
 * a misconfiguration, and the node does not count towards the quorum.</li>
 * </ul>
 */
public class RedlockHealthIndicator extends AbstractHealthIndicator {

	private static final String MASTER = "master";

	private final Redlock redlock;

	/**
	 * Creates an indicator for the nodes of a {@link Redlock}.
	 * @param redlock the instance whose nodes are checked
	 */
	public RedlockHealthIndicator(Redlock redlock) {
		super("Redlock health check failed");
		this.redlock = redlock;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		List<NodeStatus> statuses = this.redlock.checkNodes();
		int quorum = this.redlock.quorum();
		List<VoterHealth> voters = VoterHealth.of(statuses);
		int masters = (int) voters.stream().filter(VoterHealth::isMaster).count();
		int counting = (int) voters.stream().filter(VoterHealth::counts).count();
		List<Map<String, Object>> nodes = new ArrayList<>(statuses.size());
		boolean sharded = voters.size() < statuses.size();
		for (NodeStatus status : statuses) {
			nodes.add(describe(status, sharded));
		}
		if (counting >= quorum) {
			builder.up();
		}
		else if (masters >= quorum) {
			builder.outOfService().withDetail("reason", quarantineReason(voters, statuses, quorum, counting, sharded));
		}
		else {
			builder.down();
		}
		builder.withDetail("quorum", quorum)
			.withDetail("reachable", masters)
			.withDetail("counting", counting)
			.withDetail("nodes", nodes);
	}

	/**
	 * One voter's nodes: a standalone or Sentinel voter's one, a cluster voter's shards.
	 * A voter answers as a master, and counts, when all of its nodes do: then every lock
	 * can be had on it.
	 */
	private record VoterHealth(List<NodeStatus> nodes) {

		static List<VoterHealth> of(List<NodeStatus> statuses) {
			Map<Integer, List<NodeStatus>> byVoter = new LinkedHashMap<>();
			for (NodeStatus status : statuses) {
				byVoter.computeIfAbsent(status.voter(), (voter) -> new ArrayList<>()).add(status);
			}
			return byVoter.values().stream().map(VoterHealth::new).toList();
		}

		boolean isMaster() {
			return this.nodes.stream().allMatch(NodeStatus::isMaster);
		}

		boolean counts() {
			return this.nodes.stream().allMatch(NodeStatus::counts);
		}

		/** How long until every node of the voter counts. */
		Duration quarantineRemaining() {
			return this.nodes.stream().map(NodeStatus::quarantineRemaining).max(Duration::compareTo).orElseThrow();
		}

	}

	/**
	 * Why no lock can be had although enough masters answer: how many are in quarantine,
	 * until when, and what to do about nodes created just now.
	 */
	private static String quarantineReason(List<VoterHealth> voters, List<NodeStatus> statuses, int quorum,
			int counting, boolean sharded) {
		List<Duration> remaining = voters.stream()
			.filter((voter) -> voter.isMaster() && !voter.counts())
			.map(VoterHealth::quarantineRemaining)
			.sorted()
			.toList();
		Duration wait = remaining.get(quorum - counting - 1);
		String reasons = statuses.stream()
			.map(NodeStatus::quarantineReason)
			.filter(Objects::nonNull)
			.map(QuarantineReason::words)
			.distinct()
			.sorted()
			.collect(Collectors.joining(", "));
		String counted = sharded ? " voters have nodes in quarantine (" : " nodes are in quarantine (";
		return remaining.size() + " of " + voters.size() + counted + reasons + ") and a lock needs " + quorum
				+ ": no lock can be acquired for another " + (wait.toMillis() + 999) / 1000
				+ " s. A node that may have forgotten locks it granted (it started "
				+ "less than redlock.restart-quarantine ago, its clock stepped, a replica replaced it, it lost data) "
				+ "does not count until they have expired; for nodes created just now, which hold none, set "
				+ "redlock.restart-quarantine=0s (and run Redis with appendfsync always)";
	}

	private static Map<String, Object> describe(NodeStatus status, boolean sharded) {
		Map<String, Object> node = new LinkedHashMap<>();
		node.put("node", status.node());
		node.put("kind", status.kind());
		if (sharded) {
			node.put("voter", status.voter());
		}
		putIfPresent(node, "master", status.master());
		node.put("reachable", status.reachable());
		node.put("latencyMs", millis(status.latency()));
		if (!status.quarantineRemaining().isZero()) {
			node.put("quarantineRemainingMs", status.quarantineRemaining().toMillis());
			if (status.quarantineReason() != null) {
				node.put("quarantineReason", status.quarantineReason().tag());
			}
		}
		if (status.clockOff()) {
			node.put("problem", "its clock was found further from the other nodes' than redlock.clock-tolerance "
					+ "allows: it stepped, or its time synchronisation needs fixing; it counts only while it agrees");
		}
		if (status.reachable()) {
			putIfPresent(node, "version", status.version());
			putIfPresent(node, "lockCommands", status.lockCommands());
			putIfPresent(node, "role", status.role());
			if (status.uptime() != null) {
				node.put("uptimeSeconds", status.uptime().toSeconds());
			}
			if (!MASTER.equals(status.role())) {
				node.put("problem",
						"misconfiguration: this node is a "
								+ ((status.role() != null) ? status.role() : "server of unknown role")
								+ ", not a master; Redlock needs independent masters, so it does"
								+ " not count towards the quorum");
			}
		}
		else {
			putIfPresent(node, "error", status.error());
		}
		return node;
	}

	private static void putIfPresent(Map<String, Object> node, String key, @Nullable Object value) {
		if (value != null) {
			node.put(key, value);
		}
	}

	/**
	 * Milliseconds with two decimals: sub-millisecond latencies on a local network are
	 * the normal case.
	 */
	private static BigDecimal millis(Duration duration) {
		return BigDecimal.valueOf(duration.toNanos()).movePointLeft(6).setScale(2, RoundingMode.HALF_UP);
	}

}
