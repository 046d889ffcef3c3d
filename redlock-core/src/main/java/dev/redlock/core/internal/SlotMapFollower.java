package dev.redlock.core.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.internal.protocol.HashSlot;
import dev.redlock.core.internal.round.VoterLayout;
import dev.redlock.core.internal.transport.ClusterSlots;
import dev.redlock.core.internal.transport.MasterMoves;
import dev.redlock.core.internal.transport.NodeConnectionPool;
import dev.redlock.core.internal.transport.RedisNodeUri;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.exceptions.JedisConnectionException;

/**
 * Follows each cluster voter's slot map: a thread ({@code redlock-cluster-maps}) that
 * reads every cluster voter's map ({@code CLUSTER SLOTS}) once a {@link #REFRESH_NANOS
 * second}, from its shards' primaries first, then its other nodes and its seeds. It moves
 * each shard node to its shard's primary after a failover (once that server says it is a
 * master), and gives the voter's shard nodes the slots the map says they serve now, so
 * that the rounds on a migrated slot's keys go where the keys went. A shard added after
 * startup has no node of the voter: its slots stay with the node that served them (which
 * answers {@code MOVED}, a refusal) until the application restarts, and a warning says
 * so; as do the shards of a voter placed as one shard because its cluster did not answer
 * at startup and its URI did not say how many shards it has.
 */
final class SlotMapFollower implements AutoCloseable {

	/** The thread's name. */
	static final String THREAD_NAME = "redlock-cluster-maps";

	/** How often each cluster voter's map is read. */
	static final long REFRESH_NANOS = TimeUnit.SECONDS.toNanos(1);

	/**
	 * How soon after one reading another may follow when rounds meet redirections: a
	 * burst of them reads the maps once.
	 */
	static final long SOONEST_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	private static final Logger logger = LoggerFactory.getLogger(SlotMapFollower.class);

	private final List<RedisNodeUri> nodes;

	private final List<NodeConnectionPool> pools;

	private final Supplier<VoterLayout> layouts;

	private final BiConsumer<Integer, short[]> replaceSlotMap;

	private final List<Integer> clusterVoters;

	private final int timeoutMillis;

	private final Thread thread;

	private final AtomicBoolean started = new AtomicBoolean();

	/** The primaries of shards added after startup that a warning named already. */
	private final Set<String> unfollowedShards = ConcurrentHashMap.newKeySet();

	/** Whether the nodes keep restart markers (the restart quarantine is on). */
	private final boolean markers;

	/** The nodes whose marker a warning said is in a slot their shard does not serve. */
	private final Set<Integer> markersAway = ConcurrentHashMap.newKeySet();

	private volatile boolean closed;

	private SlotMapFollower(List<RedisNodeUri> nodes, List<NodeConnectionPool> pools, Supplier<VoterLayout> layouts,
			BiConsumer<Integer, short[]> replaceSlotMap, List<Integer> clusterVoters, int timeoutMillis,
			boolean markers) {
		this.nodes = nodes;
		this.markers = markers;
		this.pools = pools;
		this.layouts = layouts;
		this.replaceSlotMap = replaceSlotMap;
		this.clusterVoters = List.copyOf(clusterVoters);
		this.timeoutMillis = timeoutMillis;
		this.thread = new Thread(this::watch, THREAD_NAME);
		this.thread.setDaemon(true);
	}

	/**
	 * Returns a follower of the cluster voters among the nodes.
	 * @param nodes every voter's nodes, in voter order
	 * @param pools their connection pools
	 * @param layouts the layout now
	 * @param replaceSlotMap gives a voter's nodes the slots of a newer map
	 * @param timeoutMillis the bound for each node's answer and each new primary's check
	 * @param markers whether the nodes keep restart markers (the restart quarantine is
	 * on)
	 * @return the follower, or {@code null} when no voter is a cluster
	 */
	static @Nullable SlotMapFollower of(List<RedisNodeUri> nodes, List<NodeConnectionPool> pools,
			Supplier<VoterLayout> layouts, BiConsumer<Integer, short[]> replaceSlotMap, int timeoutMillis,
			boolean markers) {
		VoterLayout layout = layouts.get();
		List<Integer> clusterVoters = new ArrayList<>();
		for (int voter = 0; voter < layout.voters(); voter++) {
			if (nodes.get(layout.firstNodeOf(voter)).cluster() != null) {
				clusterVoters.add(voter);
			}
		}
		return clusterVoters.isEmpty() ? null
				: new SlotMapFollower(nodes, pools, layouts, replaceSlotMap, clusterVoters, timeoutMillis, markers);
	}

	/** Starts the thread, once. */
	void start() {
		if (this.started.compareAndSet(false, true)) {
			this.thread.start();
		}
	}

	/**
	 * Asks for the maps to be read now rather than at the next second, though not sooner
	 * than {@link #SOONEST_NANOS} after the last reading: a round met a redirection.
	 * Never blocks.
	 */
	void readSoon() {
		LockSupport.unpark(this.thread);
	}

	private void watch() {
		long readAt = System.nanoTime();
		while (!this.closed) {
			// close() and readSoon() wake the thread early
			LockSupport.parkNanos(this, REFRESH_NANOS);
			long sinceRead = System.nanoTime() - readAt;
			if (sinceRead < SOONEST_NANOS) {
				LockSupport.parkNanos(this, SOONEST_NANOS - sinceRead);
			}
			readAt = System.nanoTime();
			for (int voter : this.clusterVoters) {
				if (this.closed) {
					return;
				}
				try {
					follow(voter);
				}
				catch (Throwable ex) {
					logger.debug("Redlock voter {}: its slot map not read: {}", voterName(voter), ex.toString());
				}
			}
		}
	}

	/**
	 * Reads a cluster voter's slot map once, and follows it: failovers, then the slots.
	 * @param voter the voter
	 * @throws JedisConnectionException when no node of its cluster answers
	 */
	void follow(int voter) {
		VoterLayout layout = this.layouts.get();
		int first = layout.firstNodeOf(voter);
		int count = layout.nodeCountOf(voter);
		ClusterSlots map = read(first, count);
		String source = "in the slot map read every second";
		Map<HostAndPort, Integer> followed = new HashMap<>();
		for (int node = first; node < first + count; node++) {
			MasterMoves moves = this.pools.get(node).master();
			int served = node;
			ClusterSlots.Shard shard = this.nodes.get(node)
				.cluster()
				.followedIn(map, moves.primary(), (slot) -> layout.serves(served, slot));
			if (shard != null && !shard.primary().equals(moves.primary())) {
				moves.followTo(shard.primary(), source, this.timeoutMillis);
			}
			HostAndPort primary = moves.primary();
			if (primary != null) {
				followed.putIfAbsent(primary, node - first);
			}
		}
		if (count > 1) {
			followSlots(voter, layout, map, followed);
			if (this.markers) {
				warnOfMarkersAway(voter);
			}
		}
		else {
			// a voter of one node (one shard, or placed as one before its cluster
			// answered): the other shards' slots are redirected away, and refused
			for (ClusterSlots.Shard shard : map.shards()) {
				if (!followed.containsKey(shard.primary())) {
					warnOfUnfollowed(voter, shard);
				}
			}
		}
	}

	/** Warns, once per shard, of a shard whose slots no node of the voter follows. */
	private void warnOfUnfollowed(int voter, ClusterSlots.Shard shard) {
		if (this.unfollowedShards.add(shard.primaryId())) {
			logger.warn("Redlock voter {}: the shard of {} serves slots no node of the voter follows (a shard added "
					+ "after startup, or unknown then, or a failover not followed yet); their locks are refused by this "
					+ "voter until it is followed, or the application restarts", voterName(voter), shard.primary());
		}
	}

	/**
	 * Warns, once per node, of a shard node whose restart marker is in a slot its shard
	 * no longer serves (the slot moved, or the node was placed before its cluster's map
	 * was read): the node cannot read a marker of its own until the application restarts.
	 */
	private void warnOfMarkersAway(int voter) {
		VoterLayout layout = this.layouts.get();
		int first = layout.firstNodeOf(voter);
		for (int node = first; node < first + layout.nodeCountOf(voter); node++) {
			String marker = layout.markerKey(node);
			int slot = HashSlot.of(marker.getBytes(StandardCharsets.UTF_8));
			if (!layout.serves(node, slot) && this.markersAway.add(node)) {
				logger.warn(
						"Redlock voter {}: {} keeps its restart marker {} in slot {}, which its shard does not "
								+ "serve now; the node cannot read its marker until the application restarts",
						voterName(voter), this.nodes.get(node).redacted(), marker, slot);
			}
		}
	}

	/**
	 * Gives each slot to the voter's node that follows the primary serving it now; a slot
	 * whose primary no node follows stays where it was.
	 */
	private void followSlots(int voter, VoterLayout layout, ClusterSlots map, Map<HostAndPort, Integer> followed) {
		int first = layout.firstNodeOf(voter);
		short[] next = new short[HashSlot.SLOTS];
		int moved = 0;
		for (int slot = 0; slot < HashSlot.SLOTS; slot++) {
			short now = (short) (layout.nodeServing(voter, slot) - first);
			ClusterSlots.Shard serving = map.shardOf(slot);
			Integer node = (serving != null) ? followed.get(serving.primary()) : null;
			if (serving != null && node == null) {
				warnOfUnfollowed(voter, serving);
			}
			next[slot] = (node != null) ? (short) (int) node : now;
			moved += (next[slot] != now) ? 1 : 0;
		}
		if (moved > 0) {
			this.replaceSlotMap.accept(voter, next);
			logger.info("Redlock voter {}: {} slot(s) moved to another shard; their locks follow them",
					voterName(voter), moved);
		}
	}

	/**
	 * Reads the map from the shards' primaries, then the other nodes and the seeds, until
	 * one answers.
	 */
	private ClusterSlots read(int first, int count) {
		List<HostAndPort> asked = new ArrayList<>();
		for (int node = first; node < first + count; node++) {
			HostAndPort primary = this.pools.get(node).master().primary();
			if (primary != null && !asked.contains(primary)) {
				asked.add(primary);
			}
		}
		MasterMoves reader = this.pools.get(first).master();
		reader.clusterNodes().stream().filter((node) -> !asked.contains(node)).forEach(asked::add);
		List<String> failures = new ArrayList<>();
		for (HostAndPort node : asked) {
			if (this.closed) {
				throw new JedisConnectionException("Redlock has been closed");
			}
			try {
				return reader.readSlots(node, this.timeoutMillis);
			}
			catch (RuntimeException ex) {
				failures.add(node + ": " + ex.getMessage());
			}
		}
		throw new JedisConnectionException("no node of the cluster told its slots: " + String.join("; ", failures));
	}

	private String voterName(int voter) {
		RedisNodeUri node = this.nodes.get(this.layouts.get().firstNodeOf(voter));
		String redacted = node.redacted();
		int shard = redacted.indexOf(" [");
		return (shard >= 0) ? redacted.substring(0, shard) : redacted;
	}

	/** Ends the thread; never blocks. */
	@Override
	public void close() {
		this.closed = true;
		LockSupport.unpark(this.thread);
	}

}
