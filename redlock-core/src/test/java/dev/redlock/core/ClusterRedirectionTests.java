package dev.redlock.core;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.protocol.ClusterKeys;
import dev.redlock.core.internal.protocol.HashSlot;
import dev.redlock.core.internal.round.VoterLayout;
import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisCluster;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisCluster;
import dev.redlock.test.WithRedisNodes;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A cluster node's redirections are followed within the round: {@code MOVED} (the slot is
 * served elsewhere now) and {@code ASK} (mid-migration, the key went to the importing
 * node). The voter here is the three primaries of a real cluster with the slot map they
 * had at the start, never read again (a voter of several nodes built by the test), so
 * every round on a moved slot meets the redirection, whatever the timing: a cluster
 * voter's own follower of the slot map could otherwise have moved the slot first. Beside
 * it, two standalone masters X and Y; A reaches Y through a proxy it then loses, so the
 * cluster's answer decides each of A's rounds.
 */
@WithRedisNodes(count = 2)
@WithRedisCluster(shards = 3, replicasPerShard = 0)
class ClusterRedirectionTests {

	private static final Duration QUARANTINE = Duration.ofSeconds(6);

	private static final RedlockSettings SETTINGS = TestSupport.withQuarantine(QUARANTINE);

	private static final Duration TTL = Duration.ofSeconds(5);

	@Test
	void aRoundOnASlotThatMovedGoesWhereTheSlotWentWithinTheRound(RedisNodes nodes, RedisCluster cluster) {
		Moving moving = Moving.of(cluster, "moved");
		String resource = moving.resource();
		String key = moving.key();
		RedisNode target = cluster.primaryOf(moving.to());
		try (LatencyProxy yForA = LatencyProxy.to(nodes.node(1), Duration.ZERO);
				Redlock a = redlock(cluster, nodes.node(0).uri(), yForA.uri());
				Redlock b = redlock(cluster, nodes.node(0).uri(), nodes.node(1).uri())) {
			ForgetfulNodes.awaitCounting(a, b);
			yForA.close();
			cluster.migrateSlot(moving.slot(), moving.to());
			assertThat(servingShard(a, key)).as("the voter's map, as at the start").isEqualTo(moving.from());

			Lease lease = a.acquire(resource, TTL, Duration.ZERO);
			assertThat(target.command("EXISTS", key)).as("the lock where its slot went").isEqualTo("1");
			assertThat(ForgetfulNodes.refusedWhileValid(lease, b, resource, Duration.ofMillis(300))).isPositive();
			assertThat(lease.extend(QUARANTINE)).as("extended on X and the shard the slot went to").isTrue();
			assertThat(Long.parseLong(target.command("PTTL", key))).isGreaterThan(TTL.toMillis());
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
			assertThat(target.command("EXISTS", key)).isEqualTo("0");

			// a fenced lock: its script declares the lock key and the counter
			try (Lease fenced = a.acquire(LockRequest.of(resource, TTL).fenced(), Duration.ZERO)) {
				assertThat(fenced.fencingToken()).isPresent();
				assertThat(target.command("EXISTS", ClusterKeys.fenceKey(TestSupport.PREFIX + resource)))
					.isEqualTo("1");
			}
		}
	}

	@Test
	void aRoundOnAKeyThatMovedMidMigrationIsAskedOfTheImportingShard(RedisNodes nodes, RedisCluster cluster) {
		Moving moving = Moving.of(cluster, "asked");
		String resource = moving.resource();
		String key = moving.key();
		int slot = moving.slot();
		int to = moving.to();
		RedisNode source = cluster.primaryOf(moving.from());
		RedisNode target = cluster.primaryOf(to);
		String fresh = resourceInSlot(slot);
		try (LatencyProxy yForA = LatencyProxy.to(nodes.node(1), Duration.ZERO);
				Redlock a = redlock(cluster, nodes.node(0).uri(), yForA.uri());
				Redlock b = redlock(cluster, nodes.node(0).uri(), nodes.node(1).uri())) {
			ForgetfulNodes.awaitCounting(a, b);
			yForA.close();
			Lease lease = a.acquire(resource, TTL, Duration.ZERO);
			assertThat(source.command("EXISTS", key)).isEqualTo("1");

			// the key moved, the slot not yet: the source answers ASK for it
			cluster.beginSlotMigration(slot, to);
			cluster.moveKeys(slot, to, key);
			try {
				assertThat(ForgetfulNodes.refusedWhileValid(lease, b, resource, Duration.ofMillis(300))).isPositive();
				assertThat(lease.extend(QUARANTINE)).as("extended on X and the importing shard").isTrue();
				assertThat(askingPttl(target, key)).isGreaterThan(TTL.toMillis());

				// a key of the slot that is nowhere yet: the source sends it to the
				// importing shard, which takes it behind ASKING
				try (Lease other = a.acquire(fresh, TTL, Duration.ZERO)) {
					assertThat(askingPttl(target, lockKey(fresh))).isPositive();
					assertThat(b.tryAcquire(fresh, TTL)).isEmpty();
				}
				assertThat(askingPttl(target, lockKey(fresh))).as("released").isEqualTo(-2);

				assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
				assertThat(askingPttl(target, key)).as("released").isEqualTo(-2);
				Optional<Lease> next = b.tryAcquire(resource, TTL);
				assertThat(next).as("the lock free again once released").isPresent();
				next.get().release();
			}
			finally {
				cluster.finishSlotMigration(slot, to);
			}
		}
	}

	/**
	 * A lock whose slot the test moves from the shard that serves it to the next.
	 *
	 * @param resource the lock's name
	 * @param key its key as stored
	 * @param slot the key's slot
	 * @param from the shard serving it at the start
	 * @param to the shard it moves to
	 */
	private record Moving(String resource, String key, int slot, int from, int to) {

		static Moving of(RedisCluster cluster, String resource) {
			String key = lockKey(resource);
			int from = cluster.shardOf(key);
			return new Moving(resource, key, cluster.slotOf(key), from, (from + 1) % 3);
		}

	}

	/** A resource whose lock key is in the slot, other than the resources above. */
	private static String resourceInSlot(int slot) {
		for (int i = 0;; i++) {
			String resource = "asked-" + i;
			if (HashSlot.of(lockKey(resource).getBytes(StandardCharsets.UTF_8)) == slot) {
				return resource;
			}
		}
	}

	/**
	 * A key's TTL on the node importing its slot, which serves it only right after
	 * {@code ASKING}: {@code -2} when the key is not there.
	 */
	private static long askingPttl(RedisNode node, String key) {
		try (Jedis jedis = new Jedis(new HostAndPort("127.0.0.1", node.port()))) {
			jedis.asking();
			return jedis.pttl(key);
		}
	}

	private static String lockKey(String resource) {
		return ClusterKeys.lockKey(TestSupport.PREFIX + resource);
	}

	/**
	 * The shard of the cluster's voter (the first) that a client's rounds on a key go to.
	 */
	private static int servingShard(Redlock redlock, String key) {
		VoterLayout layout = redlock.internals().group().layout();
		return layout.nodeServing(0, HashSlot.of(key.getBytes(StandardCharsets.UTF_8)));
	}

	/**
	 * A client whose first voter is the cluster's three primaries with the slot map of a
	 * new cluster, as this one started, then two standalone voters.
	 */
	private static Redlock redlock(RedisCluster cluster, String x, String y) {
		List<String> primaries = List.of(cluster.primaryOf(0).uri(), cluster.primaryOf(1).uri(),
				cluster.primaryOf(2).uri());
		return Redlock.builder().shardedVoter(primaries).nodes(List.of(x, y)).settings(SETTINGS).build();
	}

}
