package dev.redlock.test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A Redis Cluster on loopback: shards of a primary and its replicas, each a
 * {@code redis-server} process in cluster mode on a free port, persistence off. The
 * 16,384 hash slots are split evenly over the shards, in order. A node is deemed down
 * after a second ({@code cluster-node-timeout 1000}), so a replica takes over a killed
 * primary within a few, when most primaries can vote (three shards or more).
 *
 * <p>
 * Besides starting and stopping, it does to a cluster what its operators do:
 * {@link #failover(int)} promotes a shard's replica, and a slot moves to another shard in
 * the three steps an operator takes ({@link #beginSlotMigration}, {@link #moveKeys},
 * {@link #finishSlotMigration}), between which clients meet {@code ASK} redirections.
 *
 * <pre class="code">
 * try (RedisCluster cluster = RedisCluster.start(3, 1)) {
 *     // redlock.nodes: cluster.uri(), and two more voters
 *     int shard = cluster.shardOf("orders");
 *     RedisNode promoted = cluster.failover(shard);
 * }
 * </pre>
 */
public final class RedisCluster implements AutoCloseable {

	/** How many hash slots a cluster has. */
	public static final int SLOTS = 16384;

	private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

	private static final Duration MIGRATE_TIMEOUT = Duration.ofSeconds(5);

	/** The nodes of each shard; the first started as its primary. */
	private final List<List<ProcessRedisNode>> shards;

	private RedisCluster(List<List<ProcessRedisNode>> shards) {
		this.shards = shards;
	}

	/**
	 * Starts a cluster with the server the kit's backend runs (the one on PATH, else the
	 * embedded one, when the backend runs no process), and waits until every node says
	 * the cluster is up, knows every other node, and every replica is in sync.
	 * @param shards how many shards, at least 1
	 * @param replicasPerShard how many replicas each primary has, 0 or more
	 * @return the cluster
	 */
	public static RedisCluster start(int shards, int replicasPerShard) {
		return start(Backends.processExecutable(Backends.select()), shards, replicasPerShard);
	}

	/**
	 * Starts a cluster with the given {@code redis-server}.
	 * @see #start(int, int)
	 */
	public static RedisCluster start(Path executable, int shards, int replicasPerShard) {
		if (shards < 1 || replicasPerShard < 0) {
			throw new IllegalArgumentException(
					"a cluster needs at least 1 shard and no negative number of replicas, was " + shards + " and "
							+ replicasPerShard);
		}
		List<List<ProcessRedisNode>> nodes = new ArrayList<>();
		RedisCluster cluster = new RedisCluster(nodes);
		try {
			List<String> clusterMode = List.of("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
					"--cluster-node-timeout", "1000", "--repl-diskless-sync-delay", "0");
			for (int shard = 0; shard < shards; shard++) {
				List<ProcessRedisNode> members = new ArrayList<>();
				nodes.add(members);
				for (int i = 0; i <= replicasPerShard; i++) {
					members.add(ProcessRedisNode.start(executable, null, false, clusterMode));
				}
			}
			cluster.form();
			return cluster;
		}
		catch (RuntimeException | Error ex) {
			cluster.close();
			throw ex;
		}
	}

	/**
	 * Gives each primary its slots, introduces every node to the first, makes the
	 * replicas replicate, and waits until the cluster is up everywhere.
	 */
	private void form() {
		ProcessRedisNode first = this.shards.get(0).get(0);
		for (int shard = 0; shard < this.shards.size(); shard++) {
			ProcessRedisNode primary = this.shards.get(shard).get(0);
			List<String> addSlots = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
			for (int slot = firstSlot(shard); slot < firstSlot(shard + 1); slot++) {
				addSlots.add(Integer.toString(slot));
			}
			expectOk(primary, addSlots.toArray(String[]::new));
		}
		for (ProcessRedisNode node : allNodes()) {
			if (node != first) {
				expectOk(first, "CLUSTER", "MEET", ProcessRedisNode.LOOPBACK, Integer.toString(node.port()));
			}
		}
		int total = allNodes().size();
		await("every node knowing every other", () -> allNodes().stream().allMatch((n) -> knownNodes(n) == total));
		for (List<ProcessRedisNode> members : this.shards) {
			String primaryId = id(members.get(0));
			for (ProcessRedisNode replica : members.subList(1, members.size())) {
				// the replica may still know the primary under a handshake's id: asked
				// again
				await("node " + replica.uri() + " replicating " + members.get(0).uri(), () -> {
					expectOk(replica, "CLUSTER", "REPLICATE", primaryId);
					return true;
				});
			}
		}
		await("the cluster up on every node, every replica in sync",
				() -> allNodes().stream().allMatch((n) -> clusterUp(n) && (isPrimary(n) || replicaInSync(n))));
		for (List<ProcessRedisNode> members : this.shards) {
			for (ProcessRedisNode replica : members.subList(1, members.size())) {
				awaitKnownAsReplica(replica, members.get(0));
			}
		}
	}

	/**
	 * The first slot of a shard as the cluster starts, or {@link #SLOTS} past the last.
	 */
	private int firstSlot(int shard) {
		return (int) ((long) SLOTS * shard / this.shards.size());
	}

	/**
	 * Returns the voter's URI, naming every primary as a seed:
	 * {@code redis-cluster://127.0.0.1:p1,127.0.0.1:p2,…}.
	 * @return the URI, for {@code redlock.nodes}
	 */
	public String uri() {
		return "redis-cluster://" + this.shards.stream()
			.map((members) -> ProcessRedisNode.LOOPBACK + ":" + members.get(0).port())
			.collect(Collectors.joining(","));
	}

	/**
	 * Returns how many shards the cluster has.
	 * @return the number of shards
	 */
	public int shards() {
		return this.shards.size();
	}

	/**
	 * Returns every node of a shard, the one started as its primary first.
	 * @param shard the shard, from 0
	 * @return its nodes
	 */
	public List<RedisNode> nodesOf(int shard) {
		return List.copyOf(this.shards.get(shard));
	}

	/**
	 * Returns every node of the cluster, shard by shard.
	 * @return the nodes
	 */
	public List<RedisNode> nodes() {
		return List.copyOf(allNodes());
	}

	/**
	 * Returns the node of a shard that says it is a primary now.
	 * @param shard the shard, from 0
	 * @return its primary
	 * @throws IllegalStateException if no running node of the shard says so, or more than
	 * one
	 */
	public RedisNode primaryOf(int shard) {
		List<RedisNode> primaries = new ArrayList<>();
		for (ProcessRedisNode node : this.shards.get(shard)) {
			if (node.isRunning() && !node.isPaused() && isPrimary(node)) {
				primaries.add(node);
			}
		}
		if (primaries.size() != 1) {
			throw new IllegalStateException(
					primaries.size() + " nodes of shard " + shard + " say they are a primary: " + primaries);
		}
		return primaries.get(0);
	}

	/**
	 * Returns the hash slot of a key, as the cluster computes it
	 * ({@code CLUSTER KEYSLOT}).
	 * @param key the key
	 * @return its slot, from 0 to 16,383
	 */
	public int slotOf(String key) {
		return Integer.parseInt(String.valueOf(anyRunningNode().command("CLUSTER", "KEYSLOT", key)).trim());
	}

	/**
	 * Returns the shard whose primary serves a key's slot now.
	 * @param key the key
	 * @return the shard, from 0
	 */
	public int shardOf(String key) {
		return shardOfSlot(slotOf(key));
	}

	/**
	 * Returns the shard whose primary serves a slot now, as the first running node sees
	 * it.
	 * @param slot the slot
	 * @return the shard, from 0
	 */
	public int shardOfSlot(int slot) {
		int port = slotOwnerPort(anyRunningNode(), slot);
		for (int shard = 0; shard < this.shards.size(); shard++) {
			for (ProcessRedisNode node : this.shards.get(shard)) {
				if (node.port() == port) {
					return shard;
				}
			}
		}
		throw new IllegalStateException("slot " + slot + " is served by port " + port + ", not a node of " + this);
	}

	/**
	 * Promotes a replica of a shard in a failover its primary agrees to
	 * ({@code CLUSTER FAILOVER}, which waits for the replica to catch up), and waits
	 * until every running node sees it as the primary of the shard's slots, and the
	 * former primary is its replica, in sync.
	 * @param shard the shard, from 0
	 * @return the new primary
	 */
	public RedisNode failover(int shard) {
		RedisNode former = primaryOf(shard);
		ProcessRedisNode replica = this.shards.get(shard)
			.stream()
			.filter((n) -> n != former && n.isRunning() && !n.isPaused())
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("shard " + shard + " has no running replica"));
		// a primary ignores the failover request of a node it does not know as its
		// replica yet, and the replica gives up after 5 s
		awaitKnownAsReplica(replica, former);
		expectOk(replica, "CLUSTER", "FAILOVER");
		awaitPrimary(shard, replica);
		await("the former primary " + former.uri() + " a replica in sync with " + replica.uri(),
				() -> !isPrimary(former) && replicaInSync(former));
		awaitKnownAsReplica(former, replica);
		return replica;
	}

	/**
	 * Waits until a replica of a shard has taken over from a primary that was killed or
	 * paused, and every running node sees it as the primary of the shard's slots.
	 * @param shard the shard, from 0
	 * @return the new primary
	 */
	public RedisNode awaitTakeover(int shard) {
		RedisNode[] promoted = new RedisNode[1];
		await("a replica of shard " + shard + " taking over", () -> {
			promoted[0] = primaryOf(shard);
			return true;
		});
		awaitPrimary(shard, (ProcessRedisNode) promoted[0]);
		return promoted[0];
	}

	private void awaitPrimary(int shard, ProcessRedisNode promoted) {
		int slot = servedSlot(shard);
		await("node " + promoted.uri() + " the primary of shard " + shard + " for every running node",
				() -> isPrimary(promoted) && runningNodes().allMatch((n) -> slotOwnerPort(n, slot) == promoted.port()));
	}

	/**
	 * A slot the shard serves now, as a running node sees it: served by one of the
	 * shard's nodes, its former primary or the promoted one (a failover keeps a shard's
	 * slots, a migration does not).
	 */
	private int servedSlot(int shard) {
		List<Integer> ports = this.shards.get(shard).stream().map(ProcessRedisNode::port).toList();
		for (int[] range : slotRanges(anyRunningNode())) {
			if (ports.contains(range[2])) {
				return range[0];
			}
		}
		throw new IllegalStateException("shard " + shard + " serves no slot");
	}

	/**
	 * Starts moving a slot to another shard: the target imports it, the source migrates
	 * it. From now on the source answers {@code ASK} for the slot's keys it no longer
	 * has, the target serves them only after {@code ASKING}.
	 * @param slot the slot
	 * @param toShard the shard that will serve it
	 */
	public void beginSlotMigration(int slot, int toShard) {
		RedisNode source = primaryOf(shardOfSlot(slot));
		RedisNode target = primaryOf(toShard);
		if (source == target) {
			throw new IllegalArgumentException("slot " + slot + " is already served by shard " + toShard);
		}
		expectOk(target, "CLUSTER", "SETSLOT", Integer.toString(slot), "IMPORTING", id(source));
		expectOk(source, "CLUSTER", "SETSLOT", Integer.toString(slot), "MIGRATING", id(target));
	}

	/**
	 * Moves keys of a slot under migration to the shard importing it ({@code MIGRATE},
	 * TTLs kept).
	 * @param slot the slot
	 * @param toShard the shard importing it
	 * @param keys the keys to move; those the source no longer has are skipped
	 */
	public void moveKeys(int slot, int toShard, String... keys) {
		if (keys.length == 0) {
			return;
		}
		RedisNode source = primaryOf(shardOfSlot(slot));
		RedisNode target = primaryOf(toShard);
		List<String> migrate = new ArrayList<>(List.of("MIGRATE", target.host(), Integer.toString(target.port()), "",
				"0", Long.toString(MIGRATE_TIMEOUT.toMillis()), "KEYS"));
		migrate.addAll(Arrays.asList(keys));
		String reply = source.command(MIGRATE_TIMEOUT.plusSeconds(1), migrate.toArray(String[]::new));
		if (!"OK".equals(reply) && !"NOKEY".equals(reply)) {
			throw new IllegalStateException("MIGRATE of slot " + slot + " answered " + reply);
		}
	}

	/**
	 * Moves every key the slot's source still has to the shard importing it.
	 * @param slot the slot
	 * @param toShard the shard importing it
	 */
	public void moveAllKeys(int slot, int toShard) {
		RedisNode source = primaryOf(shardOfSlot(slot));
		while (true) {
			String keys = source.command("CLUSTER", "GETKEYSINSLOT", Integer.toString(slot), "100");
			if (keys == null || keys.isBlank()) {
				return;
			}
			moveKeys(slot, toShard, keys.trim().split("\\R"));
		}
	}

	/**
	 * Ends a slot's migration: every primary is told that the importing shard serves it,
	 * and every running node is waited for to see so.
	 * @param slot the slot
	 * @param toShard the shard that imported it
	 */
	public void finishSlotMigration(int slot, int toShard) {
		RedisNode target = primaryOf(toShard);
		String targetId = id(target);
		expectOk(target, "CLUSTER", "SETSLOT", Integer.toString(slot), "NODE", targetId);
		for (int shard = 0; shard < this.shards.size(); shard++) {
			if (shard != toShard) {
				expectOk(primaryOf(shard), "CLUSTER", "SETSLOT", Integer.toString(slot), "NODE", targetId);
			}
		}
		await("slot " + slot + " served by shard " + toShard + " for every running node",
				() -> runningNodes().allMatch((n) -> slotOwnerPort(n, slot) == target.port()));
	}

	/**
	 * Moves a slot and its keys to another shard, in the three steps.
	 * @param slot the slot
	 * @param toShard the shard that will serve it
	 */
	public void migrateSlot(int slot, int toShard) {
		beginSlotMigration(slot, toShard);
		moveAllKeys(slot, toShard);
		finishSlotMigration(slot, toShard);
	}

	private List<ProcessRedisNode> allNodes() {
		return this.shards.stream().flatMap(List::stream).toList();
	}

	private Stream<ProcessRedisNode> runningNodes() {
		return allNodes().stream().filter((n) -> n.isRunning() && !n.isPaused());
	}

	private ProcessRedisNode anyRunningNode() {
		return runningNodes().findFirst().orElseThrow(() -> new IllegalStateException("no node of " + this + " runs"));
	}

	/** The port of the node a node names as serving a slot ({@code CLUSTER SLOTS}). */
	private static int slotOwnerPort(RedisNode node, int slot) {
		for (int[] range : slotRanges(node)) {
			if (range[0] <= slot && slot <= range[1]) {
				return range[2];
			}
		}
		return -1;
	}

	/**
	 * The slot ranges a node knows, each as its first slot, last slot and primary's port.
	 */
	private static List<int[]> slotRanges(RedisNode node) {
		Object reply = Resp.call(node.host(), node.port(), RedisNode.DEFAULT_COMMAND_TIMEOUT, "CLUSTER", "SLOTS");
		List<int[]> ranges = new ArrayList<>();
		if (reply instanceof List<?> listed) {
			for (Object range : listed) {
				List<?> fields = (List<?>) range;
				ranges.add(new int[] { ((Long) fields.get(0)).intValue(), ((Long) fields.get(1)).intValue(),
						((Long) ((List<?>) fields.get(2)).get(1)).intValue() });
			}
		}
		return ranges;
	}

	private static String id(RedisNode node) {
		return String.valueOf(node.command("CLUSTER", "MYID")).trim();
	}

	private static boolean isPrimary(RedisNode node) {
		String role = node.command(Duration.ofSeconds(1), "ROLE");
		return role != null && role.trim().startsWith("master");
	}

	private static boolean replicaInSync(RedisNode node) {
		return String.valueOf(node.command("INFO", "replication")).contains("master_link_status:up");
	}

	private static boolean clusterUp(RedisNode node) {
		return String.valueOf(node.command("CLUSTER", "INFO")).contains("cluster_state:ok");
	}

	/**
	 * The nodes a node knows, those it is still meeting (under a temporary id) left out.
	 */
	private static int knownNodes(RedisNode node) {
		return (int) String.valueOf(node.command("CLUSTER", "NODES"))
			.lines()
			.filter((l) -> !l.isBlank() && !l.contains("handshake") && !l.contains("noaddr"))
			.count();
	}

	/**
	 * Waits until every running node's view lists a node as a replica of a primary
	 * ({@code CLUSTER NODES}).
	 */
	private void awaitKnownAsReplica(RedisNode replica, RedisNode primary) {
		String replicaId = id(replica);
		String primaryId = id(primary);
		await("node " + replica.uri() + " known as a replica of " + primary.uri() + " by every running node",
				() -> runningNodes().allMatch((viewer) -> listsAsReplica(viewer, replicaId, primaryId)));
	}

	/**
	 * Whether a node's {@code CLUSTER NODES} line for a replica names its flags and its
	 * primary ({@code <id> <address> <flags> <primary id> ...}).
	 */
	private static boolean listsAsReplica(RedisNode viewer, String replicaId, String primaryId) {
		return String.valueOf(viewer.command("CLUSTER", "NODES"))
			.lines()
			.map((l) -> l.split(" "))
			.anyMatch(
					(f) -> f.length > 3 && f[0].equals(replicaId) && f[2].contains("slave") && f[3].equals(primaryId));
	}

	private static void expectOk(RedisNode node, String... command) {
		String reply = node.command(command);
		if (!"OK".equals(reply)) {
			throw new IllegalStateException(String.join(" ", Arrays.asList(command).subList(0, 2)) + " on " + node.uri()
					+ " answered " + reply);
		}
	}

	private void await(String what, BooleanSupplier condition) {
		Await.until(what + " (" + this + ")", READY_TIMEOUT, condition);
	}

	/** Stops every process. Idempotent, never throws. */
	@Override
	public void close() {
		allNodes().forEach(ProcessRedisNode::stop);
	}

	@Override
	public String toString() {
		return "Redis Cluster " + uri();
	}

}
