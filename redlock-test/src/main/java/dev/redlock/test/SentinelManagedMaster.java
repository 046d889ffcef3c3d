package dev.redlock.test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * A master that Redis Sentinel watches, as one Redlock voter: a master, its replicas and
 * its sentinels, each a {@code redis-server} process on a free loopback port, persistence
 * off. The sentinels deem the master down after a second and fail over within a few.
 * {@link #uri()} is the voter's {@code redis-sentinel://} URI; {@link #failover()} forces
 * a failover and waits until it is done.
 *
 * <pre class="code">
 * try (SentinelManagedMaster voter = SentinelManagedMaster.start("orders", 1, 3)) {
 *     // redlock.nodes: voter.uri(), and two more voters
 *     RedisNode promoted = voter.failover();
 * }
 * </pre>
 */
public final class SentinelManagedMaster implements AutoCloseable {

	private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

	private final String masterName;

	private final List<ProcessRedisNode> dataNodes;

	private final List<ProcessRedisNode> sentinels;

	/** Whether every node and sentinel speaks TLS, to clients and to each other. */
	private final boolean tls;

	private SentinelManagedMaster(String masterName, List<ProcessRedisNode> dataNodes, List<ProcessRedisNode> sentinels,
			boolean tls) {
		this.masterName = masterName;
		this.dataNodes = dataNodes;
		this.sentinels = sentinels;
		this.tls = tls;
	}

	/**
	 * Starts a master, its replicas and its sentinels with the server the kit's backend
	 * runs (the one on PATH, else the embedded one, when the backend runs no process),
	 * and waits until every sentinel knows every replica and every other sentinel.
	 * @param masterName the name the sentinels know the master by
	 * @param replicas how many replicas, at least 1
	 * @param sentinels how many sentinels, at least 1; a majority of them is the quorum
	 */
	public static SentinelManagedMaster start(String masterName, int replicas, int sentinels) {
		return start(Backends.processExecutable(Backends.select()), masterName, replicas, sentinels);
	}

	/**
	 * Starts a master, its replicas and its sentinels with the given
	 * {@code redis-server}.
	 * @see #start(String, int, int)
	 */
	public static SentinelManagedMaster start(Path executable, String masterName, int replicas, int sentinels) {
		return start(executable, null, masterName, replicas, sentinels);
	}

	/**
	 * Starts a master, its replicas and its sentinels as {@link #start(String, int, int)}
	 * does, all of them serving TLS with the kit's {@link TestCertificates} beside their
	 * plain port (which the kit's own commands use), and speaking TLS to each other: the
	 * replicas replicate over TLS, and the sentinels watch the master and announce
	 * themselves on their TLS ports, so a client learns TLS addresses only.
	 * {@link #uri()} is then a {@code rediss-sentinel://} URI.
	 * @param masterName the name the sentinels know the master by
	 * @param replicas how many replicas, at least 1
	 * @param sentinels how many sentinels, at least 1; a majority of them is the quorum
	 */
	public static SentinelManagedMaster startTls(String masterName, int replicas, int sentinels) {
		return start(Backends.processExecutable(Backends.select()), TestCertificates.get(), masterName, replicas,
				sentinels);
	}

	private static SentinelManagedMaster start(Path executable, @Nullable TestCertificates tls, String masterName,
			int replicas, int sentinels) {
		if (replicas < 1 || sentinels < 1) {
			throw new IllegalArgumentException("a Sentinel-managed master needs at least 1 replica and 1 sentinel, was "
					+ replicas + " and " + sentinels);
		}
		List<ProcessRedisNode> data = new ArrayList<>();
		List<ProcessRedisNode> watching = new ArrayList<>();
		SentinelManagedMaster group = new SentinelManagedMaster(masterName, data, watching, tls != null);
		try {
			// a full resync starts at once, not after the 5 s that Redis 7 waits for more
			// replicas by default; so does one after a failover, from the new master
			List<String> common = new ArrayList<>(List.of("--repl-diskless-sync-delay", "0"));
			if (tls != null) {
				common.addAll(List.of("--tls-replication", "yes"));
			}
			ProcessRedisNode master = ProcessRedisNode.start(executable, tls, false, common);
			data.add(master);
			for (int i = 0; i < replicas; i++) {
				List<String> arguments = new ArrayList<>(common);
				arguments.addAll(List.of("--replicaof", ProcessRedisNode.LOOPBACK,
						Integer.toString(group.announcedPort(master))));
				data.add(ProcessRedisNode.start(executable, tls, false, arguments));
			}
			int quorum = sentinels / 2 + 1;
			for (int i = 0; i < sentinels; i++) {
				watching.add(ProcessRedisNode.startSentinel(executable, tls, masterName, group.announcedPort(master),
						quorum, List.of("down-after-milliseconds 1000", "failover-timeout 5000", "parallel-syncs 1")));
			}
			group.await("every replica in sync and known to every sentinel, every sentinel known to the others",
					() -> group.replicasInSync(master) && group.sentinelsKnowEachOther(replicas));
			return group;
		}
		catch (RuntimeException | Error ex) {
			group.close();
			throw ex;
		}
	}

	/**
	 * Returns the voter's URI: {@code redis-sentinel://127.0.0.1:p1,127.0.0.1:p2,…#name},
	 * or {@code rediss-sentinel://} with the sentinels' TLS ports when started with
	 * {@link #startTls}.
	 * @return the URI, for {@code redlock.nodes}
	 */
	public String uri() {
		return (this.tls ? "rediss-sentinel://" : "redis-sentinel://") + this.sentinels.stream()
			.map((s) -> ProcessRedisNode.LOOPBACK + ":" + announcedPort(s))
			.collect(Collectors.joining(",")) + "#" + this.masterName;
	}

	/**
	 * Returns the port a node is known by to the sentinels and to clients: its TLS port
	 * when started with {@link #startTls}, else its port.
	 * @param node a data node or a sentinel
	 * @return the port
	 */
	public int announcedPort(RedisNode node) {
		return this.tls ? node.tlsPort() : node.port();
	}

	/**
	 * Returns the name the sentinels know the master by.
	 * @return the master's name
	 */
	public String masterName() {
		return this.masterName;
	}

	/**
	 * Returns the data nodes, the first started as the master.
	 * @return the master and its replicas
	 */
	public List<RedisNode> dataNodes() {
		return List.copyOf(this.dataNodes);
	}

	/**
	 * Returns the sentinels.
	 * @return the sentinels, in the order of {@link #uri()}
	 */
	public List<RedisNode> sentinels() {
		return List.copyOf(this.sentinels);
	}

	/**
	 * Returns the data node that says it is a master now.
	 * @return the master
	 * @throws IllegalStateException if none does, or more than one
	 */
	public RedisNode master() {
		List<RedisNode> masters = new ArrayList<>();
		for (ProcessRedisNode node : this.dataNodes) {
			if (node.isRunning() && !node.isPaused() && "master".equals(role(node))) {
				masters.add(node);
			}
		}
		if (masters.size() != 1) {
			throw new IllegalStateException(masters.size() + " data nodes say they are a master: " + masters);
		}
		return masters.get(0);
	}

	/**
	 * Forces a failover ({@code SENTINEL FAILOVER}) and waits until every sentinel names
	 * a replica that says it is the master now. The former master may still say it is one
	 * for a moment, until the sentinels make it a replica of the new one.
	 * @return the new master
	 */
	public RedisNode failover() {
		RedisNode former = master();
		String reply = this.sentinels.get(0).command("SENTINEL", "FAILOVER", this.masterName);
		if (!"OK".equals(reply)) {
			throw new IllegalStateException("SENTINEL FAILOVER " + this.masterName + " answered " + reply);
		}
		RedisNode[] promoted = new RedisNode[1];
		await("a replica promoted in place of " + former.uri() + ", named by every sentinel", () -> {
			Integer named = namedByEverySentinel();
			ProcessRedisNode node = (named != null && named != announcedPort(former)) ? dataNode(named) : null;
			promoted[0] = node;
			return node != null && "master".equals(role(node));
		});
		return promoted[0];
	}

	/**
	 * Waits until the data node given is the only one that says it is a master: after a
	 * {@link #failover()}, the sentinels have made the former master a replica.
	 * @param master the node that should be the master
	 */
	public void awaitOnlyMaster(RedisNode master) {
		await("only " + master.uri() + " says it is a master", () -> master().port() == master.port());
	}

	/**
	 * Returns the port every sentinel names as the master's now, or {@code null} while
	 * they differ.
	 */
	private @Nullable Integer namedByEverySentinel() {
		Integer agreed = null;
		for (ProcessRedisNode sentinel : this.sentinels) {
			String reply = sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", this.masterName);
			String[] parts = String.valueOf(reply).trim().split("\\s+");
			if (parts.length != 2) {
				return null;
			}
			int port = Integer.parseInt(parts[1]);
			if (agreed != null && agreed != port) {
				return null;
			}
			agreed = port;
		}
		return agreed;
	}

	private @Nullable ProcessRedisNode dataNode(int port) {
		return this.dataNodes.stream().filter((n) -> announcedPort(n) == port).findFirst().orElse(null);
	}

	private boolean replicasInSync(ProcessRedisNode master) {
		String info = String.valueOf(master.command("INFO", "replication"));
		long online = info.lines().filter((line) -> line.startsWith("slave") && line.contains("state=online")).count();
		return online == this.dataNodes.size() - 1;
	}

	/**
	 * Whether every sentinel knows every other sentinel, and has heard from every replica
	 * that its link to the master is up: only such a replica can be promoted.
	 */
	private boolean sentinelsKnowEachOther(int replicas) {
		for (ProcessRedisNode sentinel : this.sentinels) {
			String master = String.valueOf(sentinel.command("SENTINEL", "MASTER", this.masterName));
			if (count(master, "num-other-sentinels") != this.sentinels.size() - 1) {
				return false;
			}
			List<String> fields = String.valueOf(sentinel.command("SENTINEL", "REPLICAS", this.masterName))
				.lines()
				.map(String::trim)
				.toList();
			if (pairs(fields, "flags", "slave") != replicas || pairs(fields, "master-link-status", "ok") != replicas) {
				return false;
			}
		}
		return true;
	}

	/** How often a field has the given value in a reply rendered one value per line. */
	private static long pairs(List<String> lines, String field, String value) {
		long found = 0;
		for (int i = 0; i + 1 < lines.size(); i++) {
			if (lines.get(i).equals(field) && lines.get(i + 1).equals(value)) {
				found++;
			}
		}
		return found;
	}

	/** A field of a {@code SENTINEL MASTER} reply, rendered one value per line. */
	private static int count(String reply, String field) {
		List<String> lines = reply.lines().map(String::trim).toList();
		int at = lines.indexOf(field);
		return (at >= 0 && at + 1 < lines.size()) ? Integer.parseInt(lines.get(at + 1)) : -1;
	}

	private static @Nullable String role(RedisNode node) {
		try {
			String reply = node.command(Duration.ofSeconds(1), "ROLE");
			return (reply != null) ? reply.trim().split("\\s+")[0] : null;
		}
		catch (RuntimeException ex) {
			return null;
		}
	}

	private void await(String what, BooleanSupplier condition) {
		Await.until(what + " (" + this.masterName + ", sentinels " + uri() + ")", READY_TIMEOUT, condition);
	}

	/** Stops every process, sentinels first. Idempotent, never throws. */
	@Override
	public void close() {
		this.sentinels.forEach(ProcessRedisNode::stop);
		this.dataNodes.forEach(ProcessRedisNode::stop);
	}

	@Override
	public String toString() {
		return "Sentinel-managed master " + uri();
	}

}
