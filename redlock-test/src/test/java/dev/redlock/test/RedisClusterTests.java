package dev.redlock.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

/**
 * The kit's cluster on real processes: every slot served, keys answered only by the shard
 * serving their slot, a failover and a takeover keep a shard's slots and keys, and a slot
 * moves with its keys, redirecting with {@code ASK} while it moves. One cluster of three
 * shards with a replica each serves the tests, which leave it as they found it (a
 * failed-over shard counts as found: its replica serves the same slots).
 */
@WithRedisCluster(shards = 3, replicasPerShard = 1)
class RedisClusterTests {

	@Test
	void everySlotIsServedAndAKeyOnlyByItsShard(RedisCluster cluster) {
		assertThat(cluster.primaryOf(0).command("CLUSTER", "INFO")).contains("cluster_state:ok")
			.contains("cluster_slots_assigned:16384");
		assertThat(cluster.uri())
			.matches("redis-cluster://127\\.0\\.0\\.1:\\d+,127\\.0\\.0\\.1:\\d+,127\\.0\\.0\\.1:\\d+");
		Set<Integer> shards = IntStream.range(0, 30)
			.mapToObj((i) -> cluster.shardOf("key-" + i))
			.collect(Collectors.toSet());
		assertThat(shards).as("30 keys spread over the shards").containsExactlyInAnyOrder(0, 1, 2);

		String key = "served";
		int shard = cluster.shardOf(key);
		int slot = cluster.slotOf(key);
		assertThat(cluster.primaryOf(shard).command("SET", key, "1")).isEqualTo("OK");
		RedisNode other = cluster.primaryOf((shard + 1) % 3);
		assertThatIllegalStateException().isThrownBy(() -> other.command("GET", key))
			.withMessage("MOVED " + slot + " 127.0.0.1:" + cluster.primaryOf(shard).port());
		assertThat(cluster.primaryOf(shard).command("WAIT", "1", "5000")).isEqualTo("1");
	}

	@Test
	void aFailoverPromotesTheReplicaWithTheShardsSlotsAndKeys(RedisCluster cluster) {
		String key = "failed-over";
		int shard = cluster.shardOf(key);
		RedisNode former = cluster.primaryOf(shard);
		former.command("SET", key, "kept");

		RedisNode promoted = cluster.failover(shard);

		assertThat(promoted.port()).isNotEqualTo(former.port());
		assertThat(cluster.primaryOf(shard).port()).isEqualTo(promoted.port());
		assertThat(cluster.shardOf(key)).isEqualTo(shard);
		assertThat(promoted.command("GET", key)).isEqualTo("kept");
	}

	@Test
	void aShardThatGaveItsFirstSlotAwayStillFailsOver(RedisCluster cluster) {
		int firstOfThird = 16384 * 2 / 3;
		assertThat(cluster.shardOfSlot(firstOfThird)).isEqualTo(2);
		cluster.migrateSlot(firstOfThird, 0);
		try {
			RedisNode former = cluster.primaryOf(2);

			RedisNode promoted = cluster.failover(2);

			assertThat(promoted.port()).isNotEqualTo(former.port());
			assertThat(cluster.shardOfSlot(firstOfThird + 1)).isEqualTo(2);
		}
		finally {
			cluster.migrateSlot(firstOfThird, 2);
		}
	}

	@Test
	void aKilledPrimaryIsTakenOverByItsReplica() {
		// a takeover needs the votes of most primaries: three shards, so that two vote
		try (RedisCluster own = RedisCluster.start(3, 1)) {
			String key = "taken-over";
			int shard = own.shardOf(key);
			RedisNode killed = own.primaryOf(shard);
			killed.command("SET", key, "kept");
			assertThat(killed.command("WAIT", "1", "5000")).isEqualTo("1");

			killed.kill();
			RedisNode promoted = own.awaitTakeover(shard);

			assertThat(promoted.port()).isNotEqualTo(killed.port());
			assertThat(promoted.command("GET", key)).isEqualTo("kept");
			assertThat(own.shardOf(key)).isEqualTo(shard);
		}
	}

	@Test
	void aSlotMovesWithItsKeysAskingForThoseAlreadyMoved(RedisCluster cluster) {
		String moved = "{migrating}first";
		String left = "{migrating}second";
		int slot = cluster.slotOf(moved);
		int from = cluster.shardOf(moved);
		int to = (from + 1) % 3;
		RedisNode source = cluster.primaryOf(from);
		RedisNode target = cluster.primaryOf(to);
		source.command("SET", moved, "1");
		source.command("SET", left, "2");

		cluster.beginSlotMigration(slot, to);
		cluster.moveKeys(slot, to, moved);

		assertThatIllegalStateException().isThrownBy(() -> source.command("GET", moved))
			.withMessage("ASK " + slot + " 127.0.0.1:" + target.port());
		assertThat(source.command("GET", left)).isEqualTo("2");
		assertThatIllegalStateException().as("the target, without ASKING")
			.isThrownBy(() -> target.command("GET", moved))
			.withMessage("MOVED " + slot + " 127.0.0.1:" + source.port());

		cluster.moveAllKeys(slot, to);
		cluster.finishSlotMigration(slot, to);

		assertThat(cluster.shardOf(moved)).isEqualTo(to);
		assertThat(target.command("GET", moved)).isEqualTo("1");
		assertThat(target.command("GET", left)).isEqualTo("2");
		assertThatIllegalStateException().isThrownBy(() -> source.command("GET", left))
			.withMessage("MOVED " + slot + " 127.0.0.1:" + target.port());

		cluster.migrateSlot(slot, from);
		assertThat(cluster.shardOf(left)).isEqualTo(from);
		assertThat(source.command("GET", left)).isEqualTo("2");
	}

}
