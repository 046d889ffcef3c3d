package dev.redlock.core.internal;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.RedlockListener;
import dev.redlock.core.RedlockSettings;
import dev.redlock.core.TlsSettings;
import dev.redlock.core.internal.protocol.RawArgument;
import dev.redlock.core.internal.quarantine.CounterReseed;
import dev.redlock.core.internal.quarantine.NodeProbe;
import dev.redlock.core.internal.quarantine.NodeQuarantine;
import dev.redlock.core.internal.quarantine.QuarantineGreeting;
import dev.redlock.core.internal.quarantine.QuarantineNotice;
import dev.redlock.core.internal.round.Fanout;
import dev.redlock.core.internal.round.Quorum;
import dev.redlock.core.internal.round.Redirections;
import dev.redlock.core.internal.round.ReplicaWaits;
import dev.redlock.core.internal.round.VoterLayout;
import dev.redlock.core.internal.thread.RenewalScheduler;
import dev.redlock.core.internal.transport.NodeConnectionPool;
import dev.redlock.core.internal.transport.RedisNodeUri;
import dev.redlock.core.internal.transport.WarmUp;

/**
 * The nodes of a {@code Redlock}, from start to close: their connection pools and restart
 * quarantines, the quorum, the rounds on every node at once ({@link Fanout}), the probes,
 * the re-seeding of fencing counters, and the clean-up of values that a round could not
 * remove in time. What the rounds of a lease do is {@link ScriptRounds}'s.
 */
public final class NodeGroup implements AutoCloseable {

	private final List<RedisNodeUri> nodes;

	private final List<NodeConnectionPool> pools;

	private final List<NodeQuarantine> quarantines;

	private final Fanout fanout;

	private final ValueCleanup cleanup;

	private final LockEvents events;

	private final RedlockSettings settings;

	private final Quorum quorum;

	/** Replaced when a cluster voter's slots move from shard to shard. */
	private volatile VoterLayout layout;

	private final WarmUp warmUp;

	private final CounterReseed reseed;

	/**
	 * Follows the slot maps of cluster voters; {@code null} when no voter is a cluster.
	 */
	private final @Nullable SlotMapFollower slotMaps;

	/** Reads the nodes now and then with the restart quarantine on; {@code null} off. */
	private final @Nullable NodeProbe probe;

	/** The nodes that count a write once their replicas acknowledged it. */
	private final ReplicaWaits replicaWaits;

	public NodeGroup(List<RedisNodeUri> nodes, RedlockSettings settings, List<RedlockListener> listeners,
			TlsSettings tls, RenewalScheduler scheduler) {
		this(nodes, VoterLayout.oneNodeEach(nodes.size()), settings, listeners, tls, scheduler);
	}

	/**
	 * @param nodes every voter's nodes, in voter order
	 * @param layout which nodes make up each voter
	 */
	public NodeGroup(List<RedisNodeUri> nodes, VoterLayout layout, RedlockSettings settings,
			List<RedlockListener> listeners, TlsSettings tls, RenewalScheduler scheduler) {
		if (layout.nodes() != nodes.size()) {
			throw new IllegalArgumentException(layout + " for " + nodes.size() + " nodes");
		}
		this.nodes = List.copyOf(nodes);
		this.events = new LockEvents(listeners, this.nodes);
		this.settings = settings;
		this.layout = layout;
		this.quorum = new Quorum(layout.voters());
		List<NodeConnectionPool> pools = new ArrayList<>(nodes.size());
		List<NodeQuarantine> quarantines = new ArrayList<>(nodes.size());
		this.warmUp = (Math.min(settings.poolMinIdle(), settings.poolMaxIdle()) > 0)
				? new WarmUp(layout.nodes(), layout.nodesOfAQuorum(this.quorum.size())) : WarmUp.none();
		for (int i = 0; i < nodes.size(); i++) {
			RedisNodeUri node = nodes.get(i);
			NodeQuarantine quarantine = new NodeQuarantine(node, settings.restartQuarantine(), layout.markerKey(i));
			quarantines.add(quarantine);
			pools.add(new NodeConnectionPool(node, settings, NodeConnectionPool.reconnectBackoff(settings).toNanos(),
					new QuarantineGreeting(quarantine), tls, this.warmUp));
		}
		this.pools = List.copyOf(pools);
		this.quarantines = List.copyOf(quarantines);
		this.replicaWaits = ReplicaWaits.of(this.nodes.stream().mapToInt(RedisNodeUri::waitReplicas).toArray());
		this.reseed = new CounterReseed(this.pools, this::layout, this.quorum, (int) Math.min(Integer.MAX_VALUE,
				Math.max(WarmUp.CONNECT_TIMEOUT_MILLIS, settings.nodeTimeout().toMillis())));
		for (int i = 0; i < this.quarantines.size(); i++) {
			int node = i;
			this.quarantines.get(i).markers().reseedWith((marker) -> this.reseed.request(node, marker));
		}
		if (!settings.restartQuarantine().isZero()) {
			QuarantineNotice notice = new QuarantineNotice(this.quarantines, this::layout, this.quorum,
					settings.restartQuarantine(), "Redlock" + nodes.stream().map(RedisNodeUri::redacted).toList());
			for (int i = 0; i < this.quarantines.size(); i++) {
				int node = i;
				this.quarantines.get(i).onQuarantined((quarantine, reason, duration) -> {
					this.events.nodeQuarantined(node, reason, duration);
					notice.nodeQuarantined();
				});
			}
		}
		this.fanout = new Fanout(this.pools, settings.nodeTimeout().toNanos(), layout.sharded()
				? new ClusterRedirections(this.pools, this::layout, this::readSlotMapsSoon) : Redirections.NONE);
		this.cleanup = new ValueCleanup(new Fanout(this.pools, settings.nodeTimeout().toNanos(), true), this.pools,
				scheduler, settings.nodeTimeout().toNanos());
		this.probe = settings.restartQuarantine().isZero() ? null : new NodeProbe(this.quarantines, this.fanout,
				layout.faultyNodesAtMost(this.quorum.size()), settings.clockTolerance().toNanos());
		this.slotMaps = SlotMapFollower.of(this.nodes, this.pools, this::layout, this::replaceSlotMap,
				(int) Math.min(Integer.MAX_VALUE,
						Math.max(WarmUp.CONNECT_TIMEOUT_MILLIS, settings.nodeTimeout().toMillis())),
				!settings.restartQuarantine().isZero());
		if (this.slotMaps != null) {
			this.slotMaps.start();
		}
		if (this.probe != null) {
			for (NodeQuarantine quarantine : this.quarantines) {
				// a marker to write, or one found gone: the next probe writes it
				quarantine.markers().repairWith(() -> {
					this.probe.soon();
					quarantine.markers().repairEnded();
				});
			}
			this.probe.start();
		}
	}

	/**
	 * Starts opening the connections kept even when idle, on each node's connector
	 * thread.
	 */
	public void warmUp() {
		this.pools.forEach(NodeConnectionPool::warmUp);
	}

	/**
	 * Waits, if the first connections are still being opened, until a quorum of nodes has
	 * one (at most {@link WarmUp#CONNECT_TIMEOUT_MILLIS}); returns at once after that.
	 */
	public void awaitWarmUp() {
		this.warmUp.await();
	}

	/** The nodes, in configuration order. */
	public List<RedisNodeUri> nodes() {
		return this.nodes;
	}

	/** The connection pools, one per node in configuration order. */
	public List<NodeConnectionPool> pools() {
		return this.pools;
	}

	/** Re-seeds the fencing counters of nodes that forgot them. */
	public CounterReseed reseed() {
		return this.reseed;
	}

	/** How many voters must agree. */
	public Quorum quorum() {
		return this.quorum;
	}

	/** Which nodes make up each voter, and which slots each serves now. */
	public VoterLayout layout() {
		return this.layout;
	}

	/**
	 * Gives a cluster voter's nodes the slots of a newer map, read from its cluster.
	 * @param voter the voter
	 * @param map which of its nodes serves each slot, from 0 in its node order
	 */
	synchronized void replaceSlotMap(int voter, short[] map) {
		this.layout = this.layout.withSlotMap(voter, map);
	}

	/**
	 * Asks for the cluster voters' slot maps to be read again soon: a node redirected.
	 */
	private void readSlotMapsSoon() {
		SlotMapFollower follower = this.slotMaps;
		if (follower != null) {
			follower.readSoon();
		}
	}

	/**
	 * The follower of the cluster voters' slot maps, {@code null} when there are none.
	 */
	@Nullable SlotMapFollower slotMaps() {
		return this.slotMaps;
	}

	/**
	 * The nodes a round on a key goes to, one per voter.
	 * @param key the lock key as stored
	 * @return the selection by node index, {@code null} for every node (each voter is one
	 * node)
	 */
	public boolean @Nullable [] select(RawArgument key) {
		VoterLayout current = this.layout;
		return current.sharded() ? current.select(key.getRaw()) : null;
	}

	/** The rounds on every node at once. */
	Fanout fanout() {
		return this.fanout;
	}

	/** The listeners and per-node counters. */
	public LockEvents events() {
		return this.events;
	}

	/** The nodes that count a write once some of their replicas acknowledged it. */
	public ReplicaWaits replicaWaits() {
		return this.replicaWaits;
	}

	/** The clean-up of values that rounds could not remove in time. */
	public ValueCleanup cleanup() {
		return this.cleanup;
	}

	/** Every node's restart quarantine, in node order. */
	List<NodeQuarantine> quarantines() {
		return this.quarantines;
	}

	/** A node's restart quarantine. */
	public NodeQuarantine quarantine(int node) {
		return this.quarantines.get(node);
	}

	/** Whether a node counts towards a quorum now: it is not in restart quarantine. */
	boolean counts(int node) {
		return this.quarantines.get(node).counts();
	}

	@Override
	public void close() {
		if (this.slotMaps != null) {
			this.slotMaps.close();
		}
		if (this.probe != null) {
			this.probe.close();
		}
		// one node timeout for a reply the late-reply thread still reads, one for the
		// removal
		this.cleanup.finish(this.settings.nodeTimeout().toNanos() * 2);
		this.reseed.close();
		this.pools.forEach(NodeConnectionPool::close);
	}

}
