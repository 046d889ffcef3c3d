package dev.redlock.core.internal.transport;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.InvalidRedlockConfigurationException;
import dev.redlock.core.TlsSettings;
import dev.redlock.core.internal.protocol.HashSlot;
import dev.redlock.core.internal.transport.ClusterSlots.Shard;
import dev.redlock.core.internal.transport.ClusterSlots.SlotRange;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Turns each cluster voter ({@code redis-cluster://}) into one node per shard, from the
 * slot map its seeds tell when the {@code Redlock} is built, and checks what a wrong
 * configuration would make unsafe: a seed that is not a cluster node, seeds of two
 * clusters, slots no primary serves, and one cluster (or one of its servers) listed as
 * two voters, which would fake a quorum. Every error names the voter's {@code nodes[i]}.
 */
public final class ClusterVoters {

	private static final Logger logger = LoggerFactory.getLogger(ClusterVoters.class);

	private ClusterVoters() {
	}

	/**
	 * The nodes of every voter once each cluster voter became its shards, and each
	 * voter's slot map.
	 *
	 * @param nodes every voter's nodes, in voter order
	 * @param slotMaps by voter: which of its nodes serves each slot, {@code null} for a
	 * voter of one node
	 */
	public record Expanded(List<RedisNodeUri> nodes, List<short @Nullable []> slotMaps) {
	}

	/**
	 * Reads the slot map of every cluster voter and puts its shards in its place.
	 * @param nodes the configured nodes, in order
	 * @param slotMaps by voter: {@code null} for a voter of one configured node, else the
	 * map of a voter of several nodes (tests)
	 * @param timeoutMillis the bound for connecting to a seed and for its answer
	 * @param clientName the name given to connections, empty for none
	 * @param tls how {@code rediss-cluster://} seeds are reached
	 * @return the nodes and maps, cluster voters expanded
	 * @throws InvalidRedlockConfigurationException naming {@code nodes[i]} of a cluster
	 * voter that cannot be used
	 */
	public static Expanded expand(List<RedisNodeUri> nodes, List<short @Nullable []> slotMaps, int timeoutMillis,
			String clientName, TlsSettings tls) {
		if (nodes.stream().noneMatch((node) -> node.cluster() != null)) {
			return new Expanded(nodes, slotMaps);
		}
		List<RedisNodeUri> expanded = new ArrayList<>();
		List<short @Nullable []> maps = new ArrayList<>();
		List<List<String>> identities = new ArrayList<>();
		List<Integer> configured = new ArrayList<>();
		int next = 0;
		for (short[] map : slotMaps) {
			int count = (map == null) ? 1 : shardCount(map);
			if (map == null && nodes.get(next).cluster() != null) {
				RedisNodeUri voter = nodes.get(next);
				ClusterSlots slots = read(voter, next, voter.clientConfig(timeoutMillis, clientName, tls));
				maps.add((slots != null) ? placedShards(voter, next, slots, expanded)
						: provisionalShards(voter, expanded));
				identities.add((slots != null) ? identities(slots) : seedIdentities(voter.cluster()));
			}
			else {
				for (int i = 0; i < count; i++) {
					expanded.add(nodes.get(next + i));
				}
				maps.add(map);
				List<String> ids = new ArrayList<>();
				for (int i = 0; i < count; i++) {
					ids.addAll(nodes.get(next + i).serverIdentities());
				}
				identities.add(ids);
			}
			configured.add(next);
			next += count;
		}
		refuseSharedServers(nodes, identities, configured);
		return new Expanded(List.copyOf(expanded), maps);
	}

	/**
	 * Puts the shard nodes of a cluster voter in its place, one per shard of the map its
	 * seeds told, in the order of their first slot.
	 * @return the voter's slot map, {@code null} for one shard
	 */
	private static short @Nullable [] placedShards(RedisNodeUri voter, int index, ClusterSlots slots,
			List<RedisNodeUri> expanded) {
		List<Shard> shards = slots.inSlotOrder();
		int declared = voter.cluster().declaredShards();
		if (declared > 0 && declared != shards.size()) {
			logger.warn(
					"Redlock voter nodes[{}] ({}): the cluster has {} shards, not the {} its URI says; its {} "
							+ "shards are used (the count is used only when no seed answers at startup)",
					index, voter.redacted(), shards.size(), declared, shards.size());
		}
		short[] shardOfSlot = new short[HashSlot.SLOTS];
		for (int i = 0; i < shards.size(); i++) {
			for (SlotRange range : shards.get(i).ranges()) {
				Arrays.fill(shardOfSlot, range.first(), range.last() + 1, (short) i);
			}
			List<SlotRange> served = new ArrayList<>(shards.get(i).ranges());
			served.sort(Comparator.comparingInt(SlotRange::first));
			expanded.add(voter.inShard(shards.get(i).primary(), voter.cluster().shard(i, shards.size(), served)));
		}
		return (shards.size() == 1) ? null : shardOfSlot;
	}

	private static int shardCount(short[] map) {
		int count = 1;
		for (short shard : map) {
			count = Math.max(count, shard + 1);
		}
		return count;
	}

	/**
	 * Puts the shard nodes of a cluster voter none of whose seeds answered in its place,
	 * as many as its URI says it has (one when it does not say), each standing for an
	 * equal share of the slots until its cluster answers: they follow no primary until
	 * then, so the voter counts as down.
	 * @return the voter's slot map, {@code null} for one shard
	 */
	private static short @Nullable [] provisionalShards(RedisNodeUri voter, List<RedisNodeUri> expanded) {
		int shards = Math.max(1, voter.cluster().declaredShards());
		short[] shardOfSlot = new short[HashSlot.SLOTS];
		HostAndPort seed = voter.cluster().seeds().get(0);
		for (int i = 0; i < shards; i++) {
			int first = HashSlot.equalRangeStart(i, shards);
			int end = HashSlot.equalRangeStart(i + 1, shards);
			Arrays.fill(shardOfSlot, first, end, (short) i);
			expanded.add(voter.inShard(seed,
					voter.cluster().provisionalShard(i, shards, List.of(new SlotRange(first, end - 1)))));
		}
		return (shards == 1) ? null : shardOfSlot;
	}

	/** A cluster voter's seeds, by address: all that is known of its servers yet. */
	private static List<String> seedIdentities(ClusterShard cluster) {
		List<String> identities = new ArrayList<>();
		cluster.seeds().forEach((seed) -> identities.addAll(addressIdentities(seed)));
		return identities;
	}

	/**
	 * Asks every seed for the slot map, so that a standalone server or another cluster's
	 * node listed among the seeds is found whichever answers first.
	 * @return the map, or {@code null} when no seed answered: the voter then starts as a
	 * voter down
	 */
	private static @Nullable ClusterSlots read(RedisNodeUri voter, int index, JedisClientConfig config) {
		String setting = "nodes[" + index + "]";
		ClusterSlots first = null;
		HostAndPort firstSeed = null;
		List<String> failures = new ArrayList<>();
		for (HostAndPort seed : voter.cluster().seeds()) {
			ClusterSlots slots;
			try {
				slots = ClusterSlots.readFrom(seed, config);
			}
			catch (ClusterSlots.NotAClusterNodeException ex) {
				throw new InvalidRedlockConfigurationException(setting, voter.redacted() + ": the seed "
						+ ex.getMessage() + "; list the nodes of a cluster, or list a standalone master as redis://");
			}
			catch (JedisException ex) {
				failures.add(SentinelGroup.format(seed) + ": " + ex.getMessage());
				continue;
			}
			if (first == null) {
				first = slots;
				firstSeed = seed;
			}
			else if (!sharesAPrimary(first, slots)) {
				throw new InvalidRedlockConfigurationException(setting,
						voter.redacted() + ": the seeds " + SentinelGroup.format(firstSeed) + " and "
								+ SentinelGroup.format(seed) + " belong to two clusters (no primary in common); a "
								+ "cluster voter lists the nodes of one cluster");
			}
		}
		if (first == null && voter.cluster().declaredShards() > 0) {
			logger.warn(
					"Redlock voter {} ({}): no seed told the cluster's slots ({}); it counts as down until one "
							+ "does, then its {} shards are followed in the order of their first slot",
					setting, voter.redacted(), String.join("; ", failures), voter.cluster().declaredShards());
			return null;
		}
		if (first == null) {
			logger.warn("Redlock voter {} ({}): no seed told the cluster's slots ({}); it counts as down until one "
					+ "does. Its URI does not say how many shards the cluster has, so it is followed as one shard: "
					+ "if it has more, the locks whose keys are in the other shards' slots are refused by this voter "
					+ "until the application restarts. Say how many it has (redis-cluster://seed1,seed2?shards=3)",
					setting, voter.redacted(), String.join("; ", failures));
			return null;
		}
		List<SlotRange> unserved = first.unserved();
		if (!unserved.isEmpty()) {
			throw new InvalidRedlockConfigurationException(setting,
					voter.redacted() + ": no primary serves the slots "
							+ unserved.stream().map(SlotRange::toString).collect(Collectors.joining(",")) + " (as "
							+ SentinelGroup.format(firstSeed) + " tells); a lock whose key is in them could "
							+ "never be acquired on this voter: assign every slot before starting");
		}
		return first;
	}

	private static boolean sharesAPrimary(ClusterSlots one, ClusterSlots other) {
		Set<String> ids = one.shards().stream().map(Shard::primaryId).collect(Collectors.toSet());
		return other.shards().stream().map(Shard::primaryId).anyMatch(ids::contains);
	}

	/** Every server of a cluster, primaries and replicas, by address. */
	private static List<String> identities(ClusterSlots slots) {
		List<String> identities = new ArrayList<>();
		for (Shard shard : slots.shards()) {
			identities.add("cluster-node|" + shard.primaryId());
			identities.addAll(addressIdentities(shard.primary()));
			shard.replicas().forEach((replica) -> identities.addAll(addressIdentities(replica)));
		}
		return identities;
	}

	private static List<String> addressIdentities(HostAndPort address) {
		return new RedisNodeUri(false, address.getHost(), address.getPort(), null, null, 0, null).serverIdentities();
	}

	/**
	 * Refuses two voters that share a server: a cluster listed twice (under other seeds),
	 * or a cluster's primary or replica also listed as a voter of its own.
	 */
	private static void refuseSharedServers(List<RedisNodeUri> nodes, List<List<String>> identities,
			List<Integer> configured) {
		Map<String, Integer> seen = new HashMap<>();
		for (int voter = 0; voter < identities.size(); voter++) {
			Integer earlier = null;
			for (String identity : new HashSet<>(identities.get(voter))) {
				Integer first = seen.putIfAbsent(identity, voter);
				if (earlier == null && first != null && first != voter) {
					earlier = first;
				}
			}
			if (earlier != null) {
				int index = configured.get(voter);
				int earlierIndex = configured.get(earlier);
				throw new InvalidRedlockConfigurationException("nodes[" + index + "]",
						nodes.get(index).redacted() + " shares a server with nodes[" + earlierIndex + "] ("
								+ nodes.get(earlierIndex).redacted() + "): a server counted in two voters would fake "
								+ "a quorum, list independent voters");
			}
		}
	}

}
