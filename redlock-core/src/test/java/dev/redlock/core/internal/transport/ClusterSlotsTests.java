package dev.redlock.core.internal.transport;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.redlock.core.TlsSettings;
import dev.redlock.core.internal.protocol.HashSlot;
import dev.redlock.test.RedisCluster;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisCluster;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A cluster's slot map as read from its nodes, on a real cluster of three shards with a
 * replica each: every slot's shard as the cluster says, a moved slot and a promoted
 * replica seen at the next reading, seeds that do not answer skipped, and a seed that is
 * a standalone server refused by name. The reply's corners (unknown hosts, slots no shard
 * serves) as pure logic.
 */
@WithRedisCluster(shards = 3, replicasPerShard = 1)
class ClusterSlotsTests {

	private static final int TIMEOUT_MILLIS = 2_000;

	@Test
	void everySlotHasTheShardTheClusterNames(RedisCluster cluster) {
		ClusterSlots slots = read(address(cluster.primaryOf(1)));

		assertThat(slots.unserved()).isEmpty();
		assertThat(slots.shards()).hasSize(3);
		for (int slot = 0; slot < HashSlot.SLOTS; slot += 97) {
			ClusterSlots.Shard read = slots.shardOf(slot);
			RedisNode primary = cluster.primaryOf(cluster.shardOfSlot(slot));
			assertThat(read.primary()).as("slot %d", slot).isEqualTo(address(primary));
			List<Integer> replicas = cluster.nodesOf(cluster.shardOfSlot(slot))
				.stream()
				.filter((node) -> node.port() != primary.port())
				.map(RedisNode::port)
				.toList();
			// a replica that has replicated nothing yet is not listed (Redis 7)
			assertThat(read.replicas()).extracting(HostAndPort::getPort).isSubsetOf(replicas);
		}
	}

	@Test
	void aMovedSlotAndAPromotedReplicaShowAtTheNextReading(RedisCluster cluster) {
		int slot = cluster.slotOf("moving");
		int from = cluster.shardOfSlot(slot);
		int to = (from + 1) % 3;
		cluster.migrateSlot(slot, to);
		try {
			ClusterSlots moved = read(address(cluster.primaryOf(from)));
			assertThat(moved.shardOf(slot).primary()).isEqualTo(address(cluster.primaryOf(to)));
			assertThat(moved.shardOf(slot).ranges()).as("the target serves its own range and the moved slot")
				.hasSize(2)
				.contains(new ClusterSlots.SlotRange(slot, slot));
			assertThat(moved.shards()).hasSize(3);
		}
		finally {
			cluster.migrateSlot(slot, from);
		}

		int servedByTo = (slot + HashSlot.SLOTS / 3) % HashSlot.SLOTS;
		while (cluster.shardOfSlot(servedByTo) != to) {
			servedByTo = (servedByTo + 1) % HashSlot.SLOTS;
		}
		RedisNode former = cluster.primaryOf(to);

		RedisNode promoted = cluster.failover(to);

		ClusterSlots afterFailover = read(address(cluster.primaryOf(from)));
		assertThat(promoted.port()).isNotEqualTo(former.port());
		assertThat(afterFailover.shardOf(servedByTo).primary()).as("slot %d", servedByTo).isEqualTo(address(promoted));
		assertThat(afterFailover.shards()).hasSize(3);
	}

	@Test
	void seedsThatDoNotAnswerAreSkipped(RedisCluster cluster) {
		HostAndPort nobody = new HostAndPort("127.0.0.1", 1);
		ClusterSlots slots = read(nobody, address(cluster.primaryOf(2)));
		assertThat(slots.unserved()).isEmpty();

		assertThatThrownBy(() -> read(nobody)).hasMessageContaining("no seed of the cluster told its slots")
			.hasMessageContaining("127.0.0.1:1");
	}

	@Test
	void aStandaloneSeedIsRefusedByName(RedisCluster cluster) {
		try (RedisNodes standalone = RedisNodes.start(1)) {
			HostAndPort seed = address(standalone.node(0));
			assertThatThrownBy(() -> read(seed, address(cluster.primaryOf(0))))
				.isInstanceOf(ClusterSlots.NotAClusterNodeException.class)
				.hasMessageContaining(SentinelGroup.format(seed) + " is not a cluster node")
				.hasMessageContaining("cluster support disabled");
		}
	}

	@Test
	void unknownHostsAreTheAskedOnesAndUnservedSlotsAreListed() {
		List<Object> reply = List.of(List.of(0L, 99L, node("", 7001, "a"), node("?", 7002, "b")),
				List.of(200L, 200L, node("10.0.0.3", 7003, "c")), List.of(300L, 16383L, node("", 7001, "a")));

		ClusterSlots slots = ClusterSlots.parse(reply, "db.internal");

		assertThat(slots.shards()).hasSize(2);
		ClusterSlots.Shard first = slots.shardOf(0);
		assertThat(first.primary()).isEqualTo(new HostAndPort("db.internal", 7001));
		assertThat(first.replicas()).containsExactly(new HostAndPort("db.internal", 7002));
		assertThat(first.ranges()).extracting(ClusterSlots.SlotRange::toString).containsExactly("0-99", "300-16383");
		assertThat(slots.shardOf(200).primaryId()).isEqualTo("c");
		assertThat(slots.shardOf(150)).isNull();
		assertThat(slots.unserved()).extracting(ClusterSlots.SlotRange::toString).containsExactly("100-199", "201-299");
	}

	@Test
	void aShardNodeFollowsItsPrimaryItsPrimaryAsAReplicaOrElseMostOfItsSlots() {
		// after a failover of shard a (its replica b promoted, a gone) and a migration
		// of slots 0-99 to shard c
		List<Object> reply = List.of(List.of(0L, 99L, node("10.0.0.3", 7003, "c")),
				List.of(100L, 8191L, node("10.0.0.2", 7002, "b"), node("10.0.0.1", 7001, "a")),
				List.of(8192L, 16383L, node("10.0.0.3", 7003, "c")));
		ClusterSlots slots = ClusterSlots.parse(reply, "db.internal");
		HostAndPort formerPrimary = new HostAndPort("10.0.0.1", 7001);
		HostAndPort promoted = new HostAndPort("10.0.0.2", 7002);
		HostAndPort other = new HostAndPort("10.0.0.3", 7003);

		assertThat(slots.shardFollowing(promoted, (slot) -> false).primary()).isEqualTo(promoted);
		assertThat(slots.shardFollowing(formerPrimary, (slot) -> false).primary()).as("a replica of b now")
			.isEqualTo(promoted);
		// gone from the map: the shard that serves most of slots 0-8191
		assertThat(slots.shardFollowing(new HostAndPort("10.0.0.9", 7009), (slot) -> slot < 8192).primary())
			.isEqualTo(promoted);
		assertThat(slots.shardFollowing(null, (slot) -> slot >= 8192).primary()).isEqualTo(other);
		assertThat(slots.shardFollowing(null, (slot) -> false)).isNull();
	}

	@Test
	void aProvisionalShardNodeTakesTheShardOfItsPlaceInTheOrderOfFirstSlots() {
		List<Object> reply = List.of(List.of(10923L, 16383L, node("10.0.0.3", 7003, "c")),
				List.of(0L, 5460L, node("10.0.0.1", 7001, "a")), List.of(5461L, 10922L, node("10.0.0.2", 7002, "b")));
		ClusterSlots slots = ClusterSlots.parse(reply, "db.internal");
		ClusterShard voter = RedisNodeUri.parse("redis-cluster://10.0.0.9:7000?shards=3").cluster();
		// each stands for an equal share, all of it served by the first shard here
		ClusterShard third = voter.provisionalShard(2, 3, List.of(new ClusterSlots.SlotRange(0, 99)));
		assertThat(third.followedIn(slots, null, third::serves).primary()).isEqualTo(new HostAndPort("10.0.0.3", 7003));
		assertThat(voter.provisionalShard(3, 3, List.of()).followedIn(slots, null, (slot) -> false))
			.as("a place past the cluster's shards")
			.isNull();
		// once it follows a primary, it follows it as any shard node does
		HostAndPort followed = new HostAndPort("10.0.0.2", 7002);
		assertThat(third.followedIn(slots, followed, third::serves).primary()).isEqualTo(followed);
	}

	private static List<Object> node(String host, long port, String id) {
		return List.of(host.getBytes(StandardCharsets.UTF_8), port, id.getBytes(StandardCharsets.UTF_8));
	}

	private static ClusterSlots read(HostAndPort... seeds) {
		JedisClientConfig config = RedisNodeUri.parse("redis://127.0.0.1:6379")
			.clientConfig(TIMEOUT_MILLIS, "", TlsSettings.jvmDefault());
		return ClusterSlots.read(List.of(seeds), config);
	}

	private static HostAndPort address(RedisNode node) {
		return new HostAndPort(node.host(), node.port());
	}

}
