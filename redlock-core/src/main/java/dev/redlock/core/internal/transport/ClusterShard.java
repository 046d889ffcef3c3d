package dev.redlock.core.internal.transport;

import java.util.List;
import java.util.function.IntPredicate;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.transport.ClusterSlots.SlotRange;
import redis.clients.jedis.HostAndPort;

/**
 * A cluster voter's seeds, and for one of its shard nodes which shard it is. A voter as
 * configured ({@code redis-cluster://seed1,seed2}) has no shard yet; when the
 * {@code Redlock} is built, its slot map is read and the voter becomes one node per
 * shard, each following the primary that serves its slots through failovers.
 *
 * @param seeds the cluster nodes to read the slot map from, in configuration order
 * @param index the shard's place among the voter's shards (in the order of their first
 * slot), or {@code -1} for the voter as configured
 * @param count how many shards the voter has, or {@code 0} for the voter as configured
 * @param slots the slots the shard served when the {@code Redlock} was built, empty for
 * the voter as configured; for a provisional shard, an equal share of them
 * @param declaredShards how many shards the URI says the cluster has ({@code ?shards=k}),
 * {@code 0} when it does not say
 * @param provisional whether the shard was placed before any slot map was read (no seed
 * answered when the {@code Redlock} was built): it takes the shard of its place in the
 * order of the shards' first slot once one answers
 */
public record ClusterShard(List<HostAndPort> seeds, int index, int count, List<SlotRange> slots, int declaredShards,
		boolean provisional) {

	/** The port used when a seed's address names none. */
	public static final int DEFAULT_PORT = 6379;

	/**
	 * Checks the components.
	 */
	public ClusterShard {
		if (seeds == null || seeds.isEmpty()) {
			throw new IllegalArgumentException("a cluster voter needs at least one seed node");
		}
		seeds = List.copyOf(seeds);
		slots = List.copyOf(slots);
	}

	/**
	 * A cluster voter as configured: its seeds, and how many shards it says it has.
	 * @param seeds the seed nodes
	 * @param declaredShards the {@code shards} the URI gives, {@code 0} for none
	 */
	ClusterShard(List<HostAndPort> seeds, int declaredShards) {
		this(seeds, -1, 0, List.of(), declaredShards, false);
	}

	/** Whether this is one shard of the voter, not the voter as configured. */
	boolean placed() {
		return this.index >= 0;
	}

	/**
	 * Returns one shard of this voter.
	 * @param shardIndex its place, in the order of the shards' first slot
	 * @param shards how many shards the voter has
	 * @param served the slots it serves
	 * @return the shard
	 */
	ClusterShard shard(int shardIndex, int shards, List<SlotRange> served) {
		return new ClusterShard(this.seeds, shardIndex, shards, served, this.declaredShards, false);
	}

	/**
	 * Returns one shard of this voter placed before any slot map was read: the
	 * {@code shardIndex}-th in the order of the shards' first slot, serving an equal
	 * share of the slots until a map is read.
	 * @param shardIndex its place
	 * @param shards how many shards the voter is placed as: those its URI declares, else
	 * one
	 * @param served the equal share of the slots it stands for
	 * @return the shard
	 */
	ClusterShard provisionalShard(int shardIndex, int shards, List<SlotRange> served) {
		return new ClusterShard(this.seeds, shardIndex, shards, served, this.declaredShards, true);
	}

	/**
	 * Returns the shard of a slot map this shard node follows: as
	 * {@link ClusterSlots#shardFollowing}, except while a provisional node follows no
	 * primary yet: it takes the shard of its place in the order of the shards' first
	 * slot.
	 * @param map the slot map read
	 * @param known the primary the node follows, {@code null} for none yet
	 * @param served the slots the node serves
	 * @return the shard, or {@code null} when none is found
	 */
	public ClusterSlots.@Nullable Shard followedIn(ClusterSlots map, @Nullable HostAndPort known, IntPredicate served) {
		if (known == null && this.provisional) {
			List<ClusterSlots.Shard> ordered = map.inSlotOrder();
			return (this.index < ordered.size()) ? ordered.get(this.index) : null;
		}
		return map.shardFollowing(known, served);
	}

	/**
	 * Whether the shard served a slot when the {@code Redlock} was built.
	 * @param slot the slot
	 * @return {@code true} if one of its ranges holds it
	 */
	public boolean serves(int slot) {
		for (SlotRange range : this.slots) {
			if (range.first() <= slot && slot <= range.last()) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Returns the seeds as {@code host:port,host:port}, IPv6 literals in brackets.
	 * @return the addresses, in configuration order
	 */
	public String addresses() {
		return this.seeds.stream().map(SentinelGroup::format).collect(Collectors.joining(","));
	}

	/**
	 * Returns the slots as {@code 0-5460,5470}.
	 * @return the ranges, in order
	 */
	public String slotText() {
		return this.slots.stream().map(SlotRange::toString).collect(Collectors.joining(","));
	}

}
