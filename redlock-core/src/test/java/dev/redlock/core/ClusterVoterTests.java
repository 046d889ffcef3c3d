package dev.redlock.core;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.protocol.ClusterKeys;
import dev.redlock.core.internal.protocol.HashSlot;
import dev.redlock.core.internal.round.VoterLayout;
import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisCluster;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A voter that is a whole cluster ({@code redis-cluster://}, three shards of a primary
 * and a replica each), beside two standalone masters X and Y. The voter follows a shard's
 * failover; the promoted replica, which may lack locks its primary granted, counts
 * towards no quorum until they have expired, and only for the keys of its shard's slots.
 */
@WithRedisNodes(count = 2)
class ClusterVoterTests {

	private static final Duration QUARANTINE = Duration.ofSeconds(6);

	private static final RedlockSettings SETTINGS = TestSupport.withQuarantine(QUARANTINE);

	private static final String RESOURCE = "cluster-voter";

	private static final String KEY = ClusterKeys.lockKey(TestSupport.PREFIX + RESOURCE);

	private static RedisCluster cluster;

	@BeforeAll
	static void startCluster() {
		cluster = RedisCluster.start(3, 1);
	}

	@AfterAll
	static void stopCluster() {
		cluster.close();
	}

	@Test
	void theVoterIsOneNodePerShardOfItsCluster(RedisNodes nodes) {
		try (Redlock redlock = redlock(cluster.uri(), nodes.node(0).uri(), nodes.node(1).uri())) {
			ForgetfulNodes.awaitCounting(redlock);
			assertThat(redlock.quorum()).isEqualTo(2);
			assertThat(redlock.verifyNodes()).as("findings").isEmpty();
			List<NodeStatus> statuses = redlock.checkNodes();
			assertThat(statuses).hasSize(5);
			for (int shard = 0; shard < 3; shard++) {
				NodeStatus status = statuses.get(shard);
				assertThat(status.kind()).isEqualTo("cluster");
				assertThat(status.master()).isEqualTo("127.0.0.1:" + cluster.primaryOf(shard).port());
				assertThat(status.node()).startsWith(cluster.uri() + " [shard " + shard + " of 3, slots ");
			}
			assertThat(statuses.get(3).kind()).isEqualTo("standalone");
			try (Lease lease = redlock.acquire(RESOURCE, Duration.ofSeconds(5), Duration.ZERO)) {
				assertThat(lease.redisKey()).isEqualTo(KEY);
				RedisNode serving = cluster.primaryOf(cluster.shardOf(KEY));
				TestSupport.awaitTrue("the lock on the shard its slot picks", Duration.ofSeconds(10),
						() -> "1".equals(serving.command("EXISTS", KEY)));
			}
		}
	}

	@Test
	void aShardFailoverUnderAHeldLockGivesNoSecondHolderAndTheShardCountsAgainAfterItsQuarantine(RedisNodes nodes)
			throws Exception {
		RedisNode x = nodes.node(0);
		RedisNode y = nodes.node(1);
		int shard = cluster.shardOf(KEY);
		try (LatencyProxy yForA = LatencyProxy.to(y, Duration.ZERO);
				Redlock a = redlock(cluster.uri(), x.uri(), yForA.uri());
				Redlock b = redlock(cluster.uri(), x.uri(), y.uri())) {
			ForgetfulNodes.awaitCounting(a, b);
			// A is cut off from Y: its lock is on the cluster's shard and X only
			yForA.close();
			Lease first = a.acquire(RESOURCE, QUARANTINE, Duration.ofSeconds(5));
			long firstValidUntil = System.nanoTime() + first.remainingValidity().toNanos();
			assertThat(y.command("GET", TestSupport.PREFIX + RESOURCE)).isNull();

			// B waits for the lock throughout the failover
			CompletableFuture<Long> bAcquiredAt = CompletableFuture.supplyAsync(() -> {
				try (Lease second = b.acquire(RESOURCE, Duration.ofSeconds(2), QUARANTINE.plusSeconds(20))) {
					return System.nanoTime();
				}
			});
			RedisNode promoted = cluster.failover(shard);
			// a failover may lose what the primary had not yet replicated: this one lost
			// A's lock
			promoted.command("DEL", KEY);
			TestSupport.awaitTrue("B follows the failover", Duration.ofSeconds(10),
					() -> ("127.0.0.1:" + promoted.port()).equals(b.checkNodes().get(shard).master()));

			// without the quarantine B would have a quorum: the promoted replica and Y
			int attempts = ForgetfulNodes.refusedWhileValid(first, b, RESOURCE, Duration.ofSeconds(1));
			try (Redlock brandNew = redlock(cluster.uri(), x.uri(), y.uri())) {
				attempts += ForgetfulNodes.refusedWhileValid(first, brandNew, RESOURCE, Duration.ofSeconds(1));
				NodeStatus seen = brandNew.checkNodes().get(shard);
				assertThat(seen.master()).isEqualTo("127.0.0.1:" + promoted.port());
				assertThat(seen.counts()).as("the promoted replica counts for a client that meets it now").isFalse();
				assertThat(seen.quarantineReason()).isEqualTo(QuarantineReason.FAILOVER);
			}
			assertThat(attempts).isPositive();
			// the other shards count throughout: a failover costs the keys of one shard
			List<NodeStatus> statuses = b.checkNodes();
			for (int other = 0; other < 3; other++) {
				if (other != shard) {
					assertThat(statuses.get(other).counts()).as("shard " + other + " counts").isTrue();
				}
			}
			long acquiredAt = bAcquiredAt.get(QUARANTINE.toSeconds() + 30, TimeUnit.SECONDS);
			assertThat(acquiredAt - firstValidUntil).as("B's wait ended after A's lease, ns").isPositive();

			// once its quarantine has passed the shard counts: with Y down, the promoted
			// primary and X make the quorum
			TestSupport.awaitTrue("the shard counts again", QUARANTINE.plusSeconds(10),
					() -> b.checkNodes().get(shard).counts());
			y.kill();
			Optional<Lease> again = b.tryAcquire(RESOURCE, Duration.ofSeconds(5));
			assertThat(again).isPresent();
			assertThat(promoted.command("EXISTS", KEY)).isEqualTo("1");
			again.get().release();
		}
		finally {
			y.restart();
		}
	}

	@Test
	void aSlotMigrationUnderAHeldLockGivesNoSecondHolderAndTheLockFollowsItsSlot(RedisNodes nodes) {
		RedisNode x = nodes.node(0);
		RedisNode y = nodes.node(1);
		String resource = "migrating";
		String key = ClusterKeys.lockKey(TestSupport.PREFIX + resource);
		int slot = cluster.slotOf(key);
		int from = cluster.shardOf(key);
		int to = (from + 1) % 3;
		try (LatencyProxy yForA = LatencyProxy.to(y, Duration.ZERO);
				Redlock a = redlock(cluster.uri(), x.uri(), yForA.uri());
				Redlock b = redlock(cluster.uri(), x.uri(), y.uri())) {
			ForgetfulNodes.awaitCounting(a, b);
			// A's lock is on the cluster's shard and X only: the cluster voter's answer
			// decides every round below
			yForA.close();
			Lease first = a.acquire(resource, QUARANTINE, Duration.ofSeconds(5));
			RedisNode source = cluster.primaryOf(from);
			RedisNode target = cluster.primaryOf(to);
			assertThat(source.command("EXISTS", key)).isEqualTo("1");

			// mid-migration: the key moved, the slot not yet; the source answers ASK for
			// it, and B's rounds go on to the target, whose SET NX finds the key moved
			// there: a refusal, never a grant
			cluster.beginSlotMigration(slot, to);
			cluster.moveKeys(slot, to, key);
			assertThatThrownBy(() -> source.command("PTTL", key)).hasMessageContaining("ASK " + slot);
			int attempts = ForgetfulNodes.refusedWhileValid(first, b, resource, Duration.ofMillis(500));

			cluster.finishSlotMigration(slot, to);
			TestSupport.awaitTrue("both clients follow the slot to shard " + to, Duration.ofSeconds(10),
					() -> servingShard(a, key) == to && servingShard(b, key) == to);
			attempts += ForgetfulNodes.refusedWhileValid(first, b, resource, Duration.ofMillis(500));
			assertThat(attempts).isPositive();
			// the holder's rounds reach its key where it went: without the cluster voter
			// the extension would have X only
			assertThat(first.extend(QUARANTINE)).as("extended on X and the shard the slot moved to").isTrue();
			assertThat(Long.parseLong(target.command("PTTL", key))).isGreaterThan(QUARANTINE.toMillis() - 2_000);
			first.release();
			TestSupport.awaitTrue("the release reached the shard the slot moved to", Duration.ofSeconds(5),
					() -> "0".equals(target.command("EXISTS", key)));
			try (Lease second = b.acquire(resource, Duration.ofSeconds(5), Duration.ofSeconds(5))) {
				assertThat(target.command("EXISTS", key)).isEqualTo("1");
			}
		}
	}

	/**
	 * A shard node keeps its restart marker in a slot it served at startup; once that
	 * slot is served by another shard, the node cannot read its marker, and its grants
	 * must not count: unjudged, it could have forgotten a lock unseen. (A marker the node
	 * could not read was taken for one an ACL user may not read, whose grants count.)
	 */
	@Test
	void aShardNodeWhoseMarkerSlotMovedAwayCountsForNoGrant(RedisNodes nodes) {
		RedisNode x = nodes.node(0);
		String resource = "marker-away";
		String key = ClusterKeys.lockKey(TestSupport.PREFIX + resource);
		try (LatencyProxy yForA = LatencyProxy.to(nodes.node(1), Duration.ZERO);
				Redlock a = redlock(cluster.uri(), x.uri(), yForA.uri())) {
			ForgetfulNodes.awaitCounting(a);
			// A's rounds are decided by the cluster's answer: X alone is no quorum
			yForA.close();
			int shard = cluster.shardOf(key);
			String marker = a.internals().group().layout().markerKey(shard);
			int markerSlot = cluster.slotOf(marker);
			assertThat(cluster.shardOf(marker)).isEqualTo(shard);
			assertThat(markerSlot).isNotEqualTo(cluster.slotOf(key));
			a.acquire(resource, Duration.ofSeconds(5), Duration.ofSeconds(10)).release();

			cluster.migrateSlot(markerSlot, (shard + 1) % 3);
			try {
				TestSupport.awaitTrue("A follows the marker's slot", Duration.ofSeconds(10),
						() -> servingShard(a, marker) != shard);
				assertThat(a.tryAcquire(resource, Duration.ofSeconds(5))).as("a grant of a node not judged").isEmpty();
				assertThatThrownBy(
						() -> a.acquire(LockRequest.of(resource, Duration.ofSeconds(5)).fenced(), Duration.ZERO))
					.isInstanceOf(LockNotAcquiredException.class);
				assertThat(a.internals().group().quarantine(shard).markers().foundUnreadable())
					.as("taken for a marker an ACL user may not read")
					.isFalse();
			}
			finally {
				cluster.migrateSlot(markerSlot, shard);
			}
		}
	}

	@Test
	void aSeedThatIsAStandaloneServerFailsTheBuildNamingTheVoter(RedisNodes nodes) {
		String standaloneSeed = "redis-cluster://127.0.0.1:" + nodes.node(0).port();
		assertThatThrownBy(() -> redlock(nodes.node(1).uri(), standaloneSeed, cluster.uri()))
			.isInstanceOfSatisfying(InvalidRedlockConfigurationException.class, (ex) -> {
				assertThat(ex.setting()).isEqualTo("nodes[1]");
				assertThat(ex.getMessage()).contains("127.0.0.1:" + nodes.node(0).port() + " is not a cluster node");
			});
	}

	@Test
	void aClusterNoSeedOfWhichAnswersStartsAsOneShardDownNamedWithoutItsPassword(RedisNodes nodes) {
		String unreachable = "redis-cluster://:secret@127.0.0.1:" + TestSupport.closedPort();
		try (Redlock redlock = redlock(nodes.node(0).uri(), nodes.node(1).uri(), unreachable)) {
			NodeStatus voter = redlock.checkNodes().get(2);
			assertThat(voter.node()).isEqualTo(unreachable.replace(":secret@", "") + " [shard 0 of 1]");
			assertThat(voter.reachable()).isFalse();
			assertThat(voter.counts()).isFalse();
			// the two standalone voters carry the locks (once a node just started has
			// waited out its quarantine)
			redlock.acquire("cluster-voter-down", Duration.ofSeconds(5), QUARANTINE.multipliedBy(2)).release();
		}
	}

	@Test
	void aClusterServerListedAsAVoterOfItsOwnFailsTheBuild(RedisNodes nodes) {
		RedisNode primary = cluster.primaryOf(2);
		RedisNode replica = cluster.nodesOf(2).stream().filter((n) -> n != primary).findFirst().get();
		// Redis 7 leaves a replica out of CLUSTER SLOTS until it has replicated: the
		// startup check of the nodes finds such a replica instead (a replica, of a
		// cluster)
		TestSupport.awaitTrue("the replica in the slot map", Duration.ofSeconds(10),
				() -> String.valueOf(primary.command("CLUSTER", "SLOTS")).contains(String.valueOf(replica.port())));
		assertThatThrownBy(() -> redlock(cluster.uri(), nodes.node(0).uri(), replica.uri()))
			.isInstanceOfSatisfying(InvalidRedlockConfigurationException.class, (ex) -> {
				assertThat(ex.setting()).isEqualTo("nodes[2]");
				assertThat(ex.getMessage()).contains("shares a server with nodes[0]");
			});
	}

	/**
	 * The shard of the cluster voter (the first) that a client's rounds on a key go to.
	 */
	private static int servingShard(Redlock redlock, String key) {
		VoterLayout layout = redlock.internals().group().layout();
		return layout.nodeServing(0, HashSlot.of(key.getBytes(StandardCharsets.UTF_8)));
	}

	private static Redlock redlock(String... uris) {
		return Redlock.builder().nodes(List.of(uris)).settings(SETTINGS).build();
	}

}
