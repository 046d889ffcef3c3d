package dev.redlock.core.internal;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.NodeFinding;
import dev.redlock.core.NodeStatus;
import dev.redlock.core.RedlockListener.NodeCommand;
import dev.redlock.core.RedlockSettings;
import dev.redlock.core.internal.protocol.InfoReply;
import dev.redlock.core.internal.quarantine.NodeQuarantine;
import dev.redlock.core.internal.round.Fanout;
import dev.redlock.core.internal.round.NodeReply;
import dev.redlock.core.internal.transport.NodeCommands;
import dev.redlock.core.internal.transport.SentinelMasterUnknownException;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;

/**
 * What the nodes of a {@code Redlock} say about themselves: a bounded health round
 * ({@code Redlock.checkNodes()}) and the startup check for misconfiguration
 * ({@code Redlock.verifyNodes()}).
 */
public final class NodeDiagnostics {

	/** Time the startup check of the nodes may take, new connections included. */
	private static final long STARTUP_CHECK_NANOS = TimeUnit.SECONDS.toNanos(2);

	private final NodeGroup group;

	private final RedlockSettings settings;

	public NodeDiagnostics(NodeGroup group, RedlockSettings settings) {
		this.group = group;
		this.settings = settings;
	}

	/**
	 * Checks every node at once with {@code INFO}, within the node timeout. What the
	 * nodes say about their uptime also feeds the restart quarantine.
	 * @return one status per node, in configuration order
	 */
	public List<NodeStatus> checkNodes() {
		long askedAt = System.nanoTime();
		NodeReply[] replies = this.group.fanout().execute(new CommandArguments(Command.INFO), null);
		this.group.events().nodeReplies(NodeCommand.PING, replies, (reply) -> true);
		List<NodeStatus> statuses = new ArrayList<>(replies.length);
		for (NodeReply reply : replies) {
			String node = this.group.nodes().get(reply.node()).redacted();
			Duration latency = Duration.ofNanos(reply.nanos());
			if (reply.kind() == NodeReply.Kind.REPLIED && reply.value() instanceof byte[] info) {
				Map<String, String> fields = InfoReply.parse(info);
				NodeQuarantine quarantine = this.group.quarantine(reply.node());
				quarantine.observe(fields, askedAt);
				String uptime = fields.get("uptime_in_seconds");
				String lockCommands = this.group.pools().get(reply.node()).commands().current().tag();
				statuses.add(new NodeStatus(node, true, latency, version(fields), fields.get("role"), seconds(uptime),
						quarantine.remaining(), quarantine.reason(), quarantine.clockOffSeen(), null, lockCommands,
						kind(reply.node()), master(reply.node()), this.group.layout().voterOf(reply.node())));
			}
			else {
				NodeQuarantine quarantine = this.group.quarantine(reply.node());
				statuses.add(new NodeStatus(node, false, latency, null, null, null, quarantine.remaining(),
						quarantine.reason(), quarantine.clockOffSeen(), reply.describeFailure(), null,
						kind(reply.node()), master(reply.node()), this.group.layout().voterOf(reply.node())));
			}
		}
		return statuses;
	}

	private String kind(int node) {
		return this.group.nodes().get(node).kind();
	}

	private @Nullable String master(int node) {
		return this.group.pools().get(node).master().address();
	}

	/**
	 * Checks the nodes and settings for misconfiguration, within about two node timeouts.
	 * Errors: one server listed twice under different addresses (the same {@code run_id}:
	 * it would fake a quorum), a node that is a replica, a node of a Redis Cluster.
	 * Warnings: fewer than 3 nodes or an even count, a node that cannot be reached now (a
	 * minority may be down at startup), a {@code maxmemory-policy} other than
	 * {@code noeviction} (lock keys carry a TTL, so even {@code volatile-*} policies may
	 * evict them; with a {@code maxmemory} and the restart quarantine on, such a node
	 * counts towards no quorum), a default TTL below 3 node timeouts, and a Sentinel
	 * voter's master that refuses {@code ROLE}.
	 * @return the findings, errors first; empty when all is well
	 */
	public List<NodeFinding> verifyNodes() {
		List<NodeFinding> errors = new ArrayList<>();
		List<NodeFinding> warnings = new ArrayList<>();
		// voters, not nodes: a voter of several shard nodes is one vote
		int n = this.group.quorum().nodes();
		int nodes = this.group.nodes().size();
		if (n < 3 || n % 2 == 0) {
			warnings.add(new NodeFinding(NodeFinding.Severity.WARNING, null,
					n + " nodes: list an odd number of at " + "least 3 independent masters (3 or 5); with " + n
							+ " a quorum of " + this.group.quorum().size() + " tolerates "
							+ this.group.quorum().tolerated() + " failed nodes"));
		}
		if (this.settings.defaultTtl().compareTo(this.settings.nodeTimeout().multipliedBy(3)) < 0) {
			warnings.add(new NodeFinding(NodeFinding.Severity.WARNING, null,
					"defaultTtl " + this.settings.defaultTtl() + " is below 3 node timeouts ("
							+ this.settings.nodeTimeout() + " each): a slow round leaves " + "little or no validity"));
		}
		// at startup every connection is new (TCP, TLS, AUTH): give the check more than
		// one node timeout, so that
		// a server listed twice or a replica is found rather than reported as "cannot be
		// checked"
		this.group.awaitWarmUp();
		Fanout startup = new Fanout(this.group.pools(),
				Math.max(this.settings.nodeTimeout().toNanos(), STARTUP_CHECK_NANOS));
		NodeReply[] infos = startup.execute(new CommandArguments(Command.INFO), null);
		NodeReply[] policies = startup.execute(new CommandArguments(Command.CONFIG).add("GET").add("maxmemory-policy"),
				null);
		Map<String, Integer> byRunId = new HashMap<>();
		List<Integer> refusingCredentials = new ArrayList<>();
		for (int i = 0; i < nodes; i++) {
			String node = this.group.nodes().get(i).redacted();
			NodeReply info = infos[i];
			if (info.kind() == NodeReply.Kind.AUTH_FAILED) {
				refusingCredentials.add(i);
				continue;
			}
			if (info.kind() == NodeReply.Kind.ERROR_REPLY && !this.settings.restartQuarantine().isZero()) {
				errors.add(new NodeFinding(NodeFinding.Severity.ERROR, i,
						node + " refuses INFO (" + info.describeFailure()
								+ "): the restart quarantine reads the node's uptime with it; grant "
								+ "the user +info, or turn the quarantine off (restartQuarantine 0) and run Redis with "
								+ "appendfsync always"));
				continue;
			}
			SentinelMasterUnknownException unknownMaster = unknownMaster(info);
			if (unknownMaster != null) {
				errors.add(new NodeFinding(NodeFinding.Severity.ERROR, i,
						node + ": its sentinels know no master of that name (" + unknownMaster.getMessage()
								+ "); check the master's name and the sentinels' addresses"));
				continue;
			}
			if (info.kind() != NodeReply.Kind.REPLIED || !(info.value() instanceof byte[] bytes)) {
				warnings.add(new NodeFinding(NodeFinding.Severity.WARNING, i,
						node + " cannot be checked now (" + info.describeFailure() + ")"));
				continue;
			}
			Map<String, String> fields = InfoReply.parse(bytes);
			String runId = fields.get("run_id");
			Integer first = (runId != null) ? byRunId.putIfAbsent(runId, i) : null;
			if (first != null) {
				errors.add(new NodeFinding(NodeFinding.Severity.ERROR, i,
						node + " is the same Redis server as nodes[" + first + "] ("
								+ this.group.nodes().get(first).redacted() + "): both report run_id " + runId
								+ "; a server listed twice would fake a quorum, list independent masters"));
			}
			String role = fields.get("role");
			if (role != null && !role.equals("master")) {
				errors.add(new NodeFinding(NodeFinding.Severity.ERROR, i,
						node + " is a " + role
								+ ", not a master: a replica can lose locks on failover and is not independent of its "
								+ "master; list independent masters"));
			}
			if ("1".equals(fields.get("cluster_enabled")) && this.group.nodes().get(i).cluster() == null) {
				errors.add(new NodeFinding(NodeFinding.Severity.ERROR, i, node
						+ " is a Redis Cluster node (cluster_enabled:1): as a voter it would answer MOVED for every "
						+ "key its shard does not serve, and its shard's replicas may take over from it; list the "
						+ "cluster as one voter, redis-cluster://host:port, or a standalone master (cluster-enabled no)"));
			}
			String roleRefusal = this.group.pools().get(i).master().roleRefusal();
			if (roleRefusal != null) {
				warnings.add(new NodeFinding(NodeFinding.Severity.WARNING, i,
						node + ": its master refuses ROLE (" + roleRefusal
								+ "), so a connection that lands on a replica after a failover is taken as one "
								+ "to the master; grant the user +role"));
			}
			String policy = configValue(policies[i]);
			if (policy == null) {
				policy = fields.get("maxmemory_policy");
			}
			if (policy != null && !policy.equals("noeviction")) {
				boolean bounded = !"0".equals(fields.getOrDefault("maxmemory", "0"));
				boolean judged = !this.settings.restartQuarantine().isZero();
				warnings
					.add(new NodeFinding(NodeFinding.Severity.WARNING, i,
							node + " has maxmemory-policy " + policy + (bounded ? " with a maxmemory" : "")
									+ ": under memory pressure it may evict lock keys (they " + "carry a TTL); "
									+ ((bounded && judged)
											? "it counts towards no quorum while so configured (eviction); " : "")
									+ "set maxmemory-policy noeviction"));
			}
		}
		credentialFindings(refusingCredentials, infos, errors, warnings);
		scriptFindings(infos, errors);
		errors.addAll(warnings);
		return errors.stream().map(this::byVoter).toList();
	}

	/**
	 * The finding with the index of its node's voter, as configured: a cluster voter's
	 * shard nodes are one {@code nodes[i]}.
	 */
	private NodeFinding byVoter(NodeFinding finding) {
		Integer node = finding.node();
		return (node == null) ? finding
				: new NodeFinding(finding.severity(), this.group.layout().voterOf(node), finding.message());
	}

	/**
	 * The failure of a Sentinel voter whose sentinels all know no master of its name, if
	 * that is why the node could not be checked (seen now, or at a connection attempt
	 * whose back-off lasts).
	 */
	private static @Nullable SentinelMasterUnknownException unknownMaster(NodeReply reply) {
		if (reply.kind() == NodeReply.Kind.REPLIED) {
			return null;
		}
		for (Throwable cause = reply.error(); cause != null; cause = cause.getCause()) {
			if (cause instanceof SentinelMasterUnknownException unknown) {
				return unknown;
			}
		}
		return null;
	}

	/**
	 * Nodes whose user may run no script where a script is needed: where the server has
	 * no native commands for the lock's compare-and-delete (no lock could be released or
	 * extended there), and wherever the restart quarantine is on (it writes each node's
	 * marker with a script; without one the node would never count). An error at startup
	 * rather than a failure per call.
	 */
	private void scriptFindings(NodeReply[] infos, List<NodeFinding> errors) {
		boolean judged = !this.settings.restartQuarantine().isZero();
		for (int i = 0; i < infos.length; i++) {
			NodeCommands commands = this.group.pools().get(i).commands();
			String refusal = commands.scriptsRefused();
			if (infos[i].kind() != NodeReply.Kind.REPLIED || refusal == null) {
				continue;
			}
			String node = this.group.nodes().get(i).redacted();
			if (!commands.current().isNative()) {
				errors.add(new NodeFinding(NodeFinding.Severity.ERROR, i, node + " refuses the lock scripts (" + refusal
						+ ") and has no native compare-and-delete (DELEX in Redis 8.4+, DELIFEQ in Valkey 9+): "
						+ "no lock could be released or extended there; grant the user +@scripting (or +evalsha +eval "
						+ "+script|load), or run a server with those commands"));
			}
			else if (judged) {
				errors.add(new NodeFinding(NodeFinding.Severity.ERROR, i, node + " refuses the lock scripts (" + refusal
						+ "): the restart quarantine writes the node's marker with one, so the node would "
						+ "never count; grant the user +@scripting (or +evalsha +eval +script|load), or turn the "
						+ "quarantine off (restartQuarantine 0) and run Redis with appendfsync always"));
			}
		}
	}

	/**
	 * Nodes that refuse our credentials: like nodes that are down while they are a
	 * minority (a warning each, and the others carry the locks), a configuration error
	 * once they are so many that no quorum is left.
	 */
	private void credentialFindings(List<Integer> refusing, NodeReply[] infos, List<NodeFinding> errors,
			List<NodeFinding> warnings) {
		// the voters they take out: several shard nodes of one voter cost one vote
		long refusingVoters = refusing.stream().map(this.group.layout()::voterOf).distinct().count();
		if (this.group.quorum().lost((int) refusingVoters)) {
			StringBuilder named = new StringBuilder();
			for (int i : refusing) {
				named.append((named.length() > 0) ? ", " : "")
					.append("nodes[")
					.append(this.group.layout().voterOf(i))
					.append("] ")
					.append(this.group.nodes().get(i).redacted())
					.append(" (")
					.append(infos[i].describeFailure())
					.append(")");
			}
			errors.add(new NodeFinding(NodeFinding.Severity.ERROR, null,
					refusing.size() + " of " + this.group.nodes().size()
							+ " nodes refuse our credentials, too many for a quorum of " + this.group.quorum().size()
							+ ": " + named + "; check the user and password of these nodes"));
			return;
		}
		for (int i : refusing) {
			warnings.add(new NodeFinding(NodeFinding.Severity.WARNING, i,
					this.group.nodes().get(i).redacted() + " refuses our credentials (" + infos[i].describeFailure()
							+ "): it counts towards no quorum "
							+ "until its user and password are right; the other nodes carry the locks meanwhile"));
		}
	}

	/**
	 * The server's version: Valkey's own ({@code valkey 9.1.2}) where it says it (it
	 * reports {@code redis_version} 7.2.4 for compatibility), else {@code redis_version}.
	 */
	private static @Nullable String version(Map<String, String> fields) {
		String valkey = fields.get("valkey_version");
		return (valkey != null) ? "valkey " + valkey : fields.get("redis_version");
	}

	private static @Nullable Duration seconds(@Nullable String text) {
		try {
			return (text != null) ? Duration.ofSeconds(Long.parseLong(text.trim())) : null;
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	/**
	 * The value of a {@code CONFIG GET} reply, or {@code null} when CONFIG is refused or
	 * renamed.
	 */
	private static @Nullable String configValue(@Nullable NodeReply reply) {
		if (reply != null && reply.kind() == NodeReply.Kind.REPLIED && reply.value() instanceof List<?> pair
				&& pair.size() == 2 && pair.get(1) instanceof byte[] value) {
			return new String(value, StandardCharsets.UTF_8);
		}
		return null;
	}

}
