package dev.redlock.core.internal.round;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.protocol.HashSlot;
import dev.redlock.core.internal.protocol.KeyLayout;

/**
 * Which nodes make up each voter, and which node of each voter serves a key. A voter is
 * one node (a standalone or Sentinel-managed master) or several shard nodes, each serving
 * some of the 16,384 hash slots, as a cluster's primaries do: an equal range each, as a
 * cluster starts, or any slots a cluster's slot map gives them. A round on a key goes to
 * one node per voter, so the quorum counts voters, whatever their nodes. Nodes are
 * numbered in voter order: the first voter's, then the second's.
 */
public final class VoterLayout {

	/** Each voter's first node; one more entry past the last voter, the node count. */
	private final int[] firstNode;

	private final boolean sharded;

	/** Whether a lock's keys are stored in one hash tag: some voter is a cluster. */
	private final boolean tagged;

	/**
	 * By voter, the shard serving each slot, counted from the voter's first node;
	 * {@code null} for a voter of one node.
	 */
	private final short @Nullable [][] shardOfSlot;

	/** The slots each node serves, by node. */
	private final BitSet[] slotsOf;

	/** Each node's marker key, by node. */
	private final String[] markerKeys;

	private final List<KeyRange> keyRanges;

	private VoterLayout(int[] firstNode, short @Nullable [][] shardOfSlot, boolean tagged) {
		this(firstNode, shardOfSlot, tagged, null);
	}

	/**
	 * @param markerKeys the nodes' marker keys, kept from the layout this one replaces
	 * (where a node may now serve no slot), or {@code null} to derive them (where every
	 * node must serve a slot)
	 */
	private VoterLayout(int[] firstNode, short @Nullable [][] shardOfSlot, boolean tagged,
			String @Nullable [] markerKeys) {
		this.firstNode = firstNode;
		this.sharded = nodes() > voters();
		this.tagged = tagged || this.sharded;
		this.shardOfSlot = shardOfSlot;
		this.slotsOf = new BitSet[nodes()];
		for (int voter = 0; voter < voters(); voter++) {
			for (int node = firstNode[voter]; node < firstNode[voter + 1]; node++) {
				this.slotsOf[node] = new BitSet(HashSlot.SLOTS);
			}
			for (int slot = 0; slot < HashSlot.SLOTS; slot++) {
				this.slotsOf[nodeFor(voter, slot)].set(slot);
			}
		}
		this.keyRanges = cutKeyRanges();
		if (markerKeys != null) {
			this.markerKeys = markerKeys;
			return;
		}
		for (int node = 0; node < nodes(); node++) {
			if (this.slotsOf[node].isEmpty()) {
				throw new IllegalArgumentException("node " + node + " of voter " + voterOf(node) + " serves no slot");
			}
		}
		this.markerKeys = new String[nodes()];
		for (int node = 0; node < nodes(); node++) {
			this.markerKeys[node] = keys().markerKey(this.slotsOf[node]);
		}
	}

	/**
	 * The same voters and nodes, one voter's nodes serving the slots of a newer map: its
	 * cluster moved slots from shard to shard. Each node keeps its marker key, and a node
	 * may now serve no slot (its slots all moved away).
	 * @param voter the voter, a voter of several nodes
	 * @param map which of its nodes serves each of the 16,384 slots, numbered from 0 in
	 * the voter's node order
	 * @return the layout
	 */
	public VoterLayout withSlotMap(int voter, short[] map) {
		short[] current = this.shardOfSlot[voter];
		if (current == null || map.length != HashSlot.SLOTS) {
			throw new IllegalArgumentException("voter " + voter + " has no slot map of " + HashSlot.SLOTS + " slots");
		}
		for (short shard : map) {
			if (shard < 0 || shard >= nodeCountOf(voter)) {
				throw new IllegalArgumentException("voter " + voter + " has no node " + shard);
			}
		}
		short[][] maps = this.shardOfSlot.clone();
		maps[voter] = map.clone();
		return new VoterLayout(this.firstNode, maps, this.tagged, this.markerKeys);
	}

	/**
	 * Returns which node of a voter serves a slot.
	 * @param voter the voter
	 * @param slot the slot
	 * @return the node's index
	 */
	public int nodeServing(int voter, int slot) {
		return nodeFor(voter, slot);
	}

	/** The node of a voter that serves a slot. */
	private int nodeFor(int voter, int slot) {
		short[] shards = this.shardOfSlot[voter];
		return this.firstNode[voter] + ((shards != null) ? shards[slot] : 0);
	}

	/**
	 * The slots from the first to the last, both included, and the node of each voter
	 * that serves them: the nodes a round on a key of these slots goes to together.
	 *
	 * @param firstSlot the first slot
	 * @param lastSlot the last slot
	 * @param nodes the node serving them, by voter
	 */
	public record KeyRange(int firstSlot, int lastSlot, int[] nodes) {

		@Override
		public String toString() {
			return "slots " + this.firstSlot + "-" + this.lastSlot;
		}

	}

	/**
	 * A voter of one node per node.
	 * @param nodes how many nodes, at least one
	 */
	public static VoterLayout oneNodeEach(int nodes) {
		if (nodes < 1) {
			throw new IllegalArgumentException("at least one voter is needed, not " + nodes);
		}
		int[] first = new int[nodes + 1];
		for (int i = 0; i <= nodes; i++) {
			first[i] = i;
		}
		return new VoterLayout(first, new short[nodes][], false);
	}

	/**
	 * Voters of so many nodes each, each node serving an equal range of the slots.
	 * @param nodesPerVoter each voter's node count, in voter order, each at least one
	 */
	public static VoterLayout of(List<Integer> nodesPerVoter) {
		List<short @Nullable []> maps = new ArrayList<>(nodesPerVoter.size());
		for (int voter = 0; voter < nodesPerVoter.size(); voter++) {
			int count = nodesPerVoter.get(voter);
			if (count < 1 || count > HashSlot.SLOTS) {
				throw new IllegalArgumentException(
						"voter " + voter + " needs 1 to " + HashSlot.SLOTS + " nodes, not " + count);
			}
			maps.add((count == 1) ? null : equalRanges(count));
		}
		return ofSlotMaps(maps);
	}

	/**
	 * Voters whose nodes serve the slots their maps give them, a lock's keys in one hash
	 * tag only when some voter has several nodes.
	 * @param shardOfSlot by voter, in voter order: {@code null} for a voter of one node,
	 * else the shard serving each of the 16,384 slots, numbered from 0 in the voter's
	 * node order; every shard serves a slot at least
	 */
	public static VoterLayout ofSlotMaps(List<short @Nullable []> shardOfSlot) {
		return ofSlotMaps(shardOfSlot, false);
	}

	/**
	 * Voters whose nodes serve the slots their maps give them.
	 * @param shardOfSlot as for {@link #ofSlotMaps(List)}
	 * @param clusterVoter whether some voter is a cluster: a lock's keys are then stored
	 * in one hash tag even while every voter is one node (a cluster of one shard, or one
	 * placed as one shard), so that the layout does not depend on how many shards a
	 * cluster had when a client started, and a cluster node never gets two slots' keys in
	 * one script
	 */
	public static VoterLayout ofSlotMaps(List<short @Nullable []> shardOfSlot, boolean clusterVoter) {
		if (shardOfSlot.isEmpty()) {
			throw new IllegalArgumentException("at least one voter is needed");
		}
		int[] first = new int[shardOfSlot.size() + 1];
		short[][] maps = new short[shardOfSlot.size()][];
		for (int voter = 0; voter < maps.length; voter++) {
			short[] map = shardOfSlot.get(voter);
			int count = 1;
			if (map != null) {
				if (map.length != HashSlot.SLOTS) {
					throw new IllegalArgumentException(
							"voter " + voter + "'s map has " + map.length + " slots, not " + HashSlot.SLOTS);
				}
				for (short shard : map) {
					if (shard < 0) {
						throw new IllegalArgumentException("voter " + voter + " serves not every slot");
					}
					count = Math.max(count, shard + 1);
				}
				maps[voter] = map.clone();
			}
			first[voter + 1] = first[voter] + count;
		}
		return new VoterLayout(first, maps, clusterVoter);
	}

	/**
	 * The slot map of so many shards that serve an equal range of the slots each, as a
	 * cluster's primaries do when it starts.
	 * @param shards how many shards
	 */
	public static short[] equalRanges(int shards) {
		short[] map = new short[HashSlot.SLOTS];
		for (int slot = 0; slot < map.length; slot++) {
			map[slot] = (short) shardOf(slot, shards);
		}
		return map;
	}

	/** How many voters. */
	public int voters() {
		return this.firstNode.length - 1;
	}

	/** How many nodes, all voters' together. */
	public int nodes() {
		return this.firstNode[this.firstNode.length - 1];
	}

	/** Whether some voter has more than one node: only then does a key pick nodes. */
	public boolean sharded() {
		return this.sharded;
	}

	/**
	 * How the nodes store a lock's keys: in one hash tag when some voter is a cluster or
	 * has several nodes.
	 */
	public KeyLayout keys() {
		return KeyLayout.of(this.tagged);
	}

	/**
	 * The key of a node's marker: {@code {fence}} with the plain key layout, else a key
	 * in a slot the node serves (the lowest such tag: for a node serving every slot, a
	 * key in slot 2853).
	 * @param node the node's index
	 */
	public String markerKey(int node) {
		return this.markerKeys[node];
	}

	/**
	 * How many nodes a quorum of voters has at least, counted the way a warm-up can count
	 * them: every node but those of the voters a quorum can do without, the largest ones.
	 * With one node per voter, the quorum itself.
	 * @param quorum how many voters make a quorum
	 */
	public int nodesOfAQuorum(int quorum) {
		int[] sizes = new int[voters()];
		for (int voter = 0; voter < sizes.length; voter++) {
			sizes[voter] = this.firstNode[voter + 1] - this.firstNode[voter];
		}
		Arrays.sort(sizes);
		int nodes = 0;
		for (int voter = 0; voter < quorum && voter < sizes.length; voter++) {
			nodes += sizes[voter];
		}
		return nodes;
	}

	/** How many nodes a voter has. */
	public int nodeCountOf(int voter) {
		return this.firstNode[voter + 1] - this.firstNode[voter];
	}

	/** A voter's first node; its others follow it. */
	public int firstNodeOf(int voter) {
		return this.firstNode[voter];
	}

	/**
	 * How many nodes may be faulty at once when a minority of voters is: every node of
	 * the voters a quorum can do without, the largest ones. With one node per voter,
	 * {@code N - quorum}.
	 * @param quorum how many voters make a quorum
	 */
	public int faultyNodesAtMost(int quorum) {
		return nodes() - nodesOfAQuorum(quorum);
	}

	/** Whether a node serves a slot. */
	public boolean serves(int node, int slot) {
		return this.slotsOf[node].get(slot);
	}

	/** Whether two nodes serve some slot in common. */
	public boolean overlap(int node, int other) {
		return this.slotsOf[node].intersects(this.slotsOf[other]);
	}

	/**
	 * The slots cut where any voter's node changes, each with the node of every voter
	 * that serves it, in slot order: one range of every slot when every voter is one
	 * node.
	 */
	public List<KeyRange> keyRanges() {
		return this.keyRanges;
	}

	private List<KeyRange> cutKeyRanges() {
		List<KeyRange> ranges = new ArrayList<>();
		int[] nodes = nodesFor(0);
		int start = 0;
		for (int slot = 1; slot <= HashSlot.SLOTS; slot++) {
			int[] next = (slot < HashSlot.SLOTS) ? nodesFor(slot) : null;
			if (next == null || !Arrays.equals(next, nodes)) {
				ranges.add(new KeyRange(start, slot - 1, nodes));
				nodes = next;
				start = slot;
			}
		}
		return List.copyOf(ranges);
	}

	/** The node of each voter that serves a slot. */
	private int[] nodesFor(int slot) {
		int[] nodes = new int[voters()];
		for (int voter = 0; voter < nodes.length; voter++) {
			nodes[voter] = nodeFor(voter, slot);
		}
		return nodes;
	}

	/**
	 * The key range a key falls in: its index in {@link #keyRanges()}.
	 * @param key the key as stored
	 */
	public int keyRangeOf(byte[] key) {
		int slot = HashSlot.of(key);
		int low = 0;
		int high = this.keyRanges.size() - 1;
		while (low < high) {
			int middle = (low + high + 1) >>> 1;
			if (this.keyRanges.get(middle).firstSlot() <= slot) {
				low = middle;
			}
			else {
				high = middle - 1;
			}
		}
		return low;
	}

	/**
	 * The nodes a round on a key of the range goes to, as {@link #select} gives them.
	 * @param range one of {@link #keyRanges()}
	 */
	public boolean[] selection(KeyRange range) {
		boolean[] selected = new boolean[nodes()];
		for (int node : range.nodes()) {
			selected[node] = true;
		}
		return selected;
	}

	/** The voter a node belongs to. */
	public int voterOf(int node) {
		for (int voter = 0; voter < voters(); voter++) {
			if (node < this.firstNode[voter + 1]) {
				return voter;
			}
		}
		throw new IndexOutOfBoundsException("node " + node + " of " + nodes());
	}

	/**
	 * The nodes that serve a key, one per voter: for each voter, the node whose slot
	 * range holds the key's slot.
	 * @param key the key as stored
	 * @return the selection, by node index; {@code null} when every voter is one node
	 * (every node serves every key)
	 */
	public boolean @Nullable [] select(byte[] key) {
		if (!this.sharded) {
			return null;
		}
		int slot = HashSlot.of(key);
		boolean[] selected = new boolean[nodes()];
		for (int voter = 0; voter < voters(); voter++) {
			selected[nodeFor(voter, slot)] = true;
		}
		return selected;
	}

	/**
	 * The shard of so many that serves a slot: shard {@code i} serves slots
	 * {@code [16384 i / k, 16384 (i+1) / k)}.
	 */
	static int shardOf(int slot, int shards) {
		for (int shard = shards - 1; shard > 0; shard--) {
			if (HashSlot.equalRangeStart(shard, shards) <= slot) {
				return shard;
			}
		}
		return 0;
	}

	@Override
	public String toString() {
		StringBuilder text = new StringBuilder("voters of ");
		for (int voter = 0; voter < voters(); voter++) {
			text.append((voter == 0) ? "" : ", ").append(this.firstNode[voter + 1] - this.firstNode[voter]);
		}
		return text.append(" node(s)").toString();
	}

}
