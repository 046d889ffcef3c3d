package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.protocol.ClusterKeys;
import dev.redlock.core.internal.protocol.HashSlot;
import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Voters of several shard nodes, the seam cluster voters will use: three voters of two
 * standalone masters each, shard 0 serving the slots below 8,192 and shard 1 the rest. A
 * lock goes to one node per voter, the one its key's slot picks, and the quorum counts
 * voters: a shard down costs its voter the keys of that shard only.
 */
@WithRedisNodes(count = 6)
class ShardedVoterTests {

	private static final int VOTERS = 3;

	private static final int SHARDS = 2;

	@Test
	void eachLockIsOnTheShardItsSlotPicksInEveryVoterAndNowhereElse(RedisNodes nodes) {
		List<Lease> leases = new ArrayList<>();
		int[] perShard = new int[SHARDS];
		try (Redlock redlock = sharded(nodes)) {
			assertThat(redlock.quorum()).as("2 of 3 voters, not 4 of 6 nodes").isEqualTo(2);
			for (int i = 0; i < 100; i++) {
				leases.add(redlock.acquire("spread-" + i, Duration.ofSeconds(30), Duration.ZERO));
			}
			for (int i = 0; i < 100; i++) {
				String key = ClusterKeys.lockKey(TestSupport.PREFIX + "spread-" + i);
				int shard = shardOf(key);
				perShard[shard]++;
				for (int voter = 0; voter < VOTERS; voter++) {
					// the round returns once a quorum granted: the third voter's SET may
					// follow a moment later
					RedisNode serving = node(nodes, voter, shard);
					TestSupport.awaitTrue(key + " on " + serving.uri(), Duration.ofSeconds(10),
							() -> "1".equals(serving.command("EXISTS", key)));
					assertThat(node(nodes, voter, 1 - shard).command("EXISTS", key)).as(key + " on the other shard")
						.isEqualTo("0");
				}
			}
			leases.forEach(Lease::release);
		}
		assertThat(perShard[0]).as("keys on shard 0 of 100").isBetween(30, 70);
		TestSupport.awaitNoKeys(nodes);
	}

	@Test
	void aHeldLockIsRefusedToAnotherRedlockAndGrantedOnceReleased(RedisNodes nodes) {
		try (Redlock a = sharded(nodes); Redlock b = sharded(nodes)) {
			for (int i = 0; i < 20; i++) {
				String resource = "exclusive-" + i;
				Lease held = a.acquire(resource, Duration.ofSeconds(30), Duration.ZERO);
				assertThat(b.tryAcquire(resource, Duration.ofSeconds(30))).as(resource + " held by a").isEmpty();
				held.release();
				Optional<Lease> second = b.tryAcquire(resource, Duration.ofSeconds(30));
				assertThat(second).as(resource + " released by a").isPresent();
				second.get().release();
			}
		}
		TestSupport.awaitNoKeys(nodes);
	}

	@Test
	void aShardDownCostsItsVoterOnlyTheKeysOfThatShard(RedisNodes nodes) {
		String onShard0 = resourceOnShard(0);
		String onShard1 = resourceOnShard(1);
		try (Redlock redlock = sharded(nodes)) {
			node(nodes, 0, 0).kill();
			assertThat(redlock.tryAcquire(onShard0, Duration.ofSeconds(30))).as("voters 1 and 2 still serve shard 0")
				.hasValueSatisfying(Lease::release);

			node(nodes, 1, 0).kill();
			assertThat(redlock.tryAcquire(onShard0, Duration.ofSeconds(30)))
				.as("only voter 2 serves shard 0: no quorum")
				.isEmpty();
			assertThat(redlock.tryAcquire(onShard1, Duration.ofSeconds(30))).as("every voter serves shard 1")
				.hasValueSatisfying(Lease::release);
		}
		finally {
			node(nodes, 0, 0).restart();
			node(nodes, 1, 0).restart();
		}
	}

	@Test
	void extensionsAndReleasesTogetherGoToEachKeysShards(RedisNodes nodes) throws Exception {
		try (Redlock redlock = sharded(nodes)) {
			List<Lease> leases = new ArrayList<>();
			for (int i = 0; i < 40; i++) {
				leases.add(redlock.acquire("together-" + i, Duration.ofSeconds(2), Duration.ZERO));
			}
			for (Lease lease : leases) {
				assertThat(lease.extend(Duration.ofSeconds(60))).isTrue();
			}
			String key = ClusterKeys.lockKey(TestSupport.PREFIX + "together-0");
			long pttl = Long.parseLong(node(nodes, 0, shardOf(key)).command("PTTL", key));
			assertThat(pttl).as("extended on the key's shard").isGreaterThan(2000);

			// released from 8 threads at once: releases waiting together go as a batch
			ExecutorService threads = Executors.newFixedThreadPool(8);
			try {
				List<CompletableFuture<Void>> releases = leases.stream()
					.map((lease) -> CompletableFuture.runAsync(lease::release, threads))
					.toList();
				CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
			}
			finally {
				threads.shutdown();
			}
			assertThat(leases).noneMatch(Lease::isValid);
		}
		TestSupport.awaitNoKeys(nodes);
	}

	/**
	 * Keys of shard 0 with voter 0's shard 0 down and voter 1's slow (100 ms each way):
	 * only voters 1 and 2 can grant them, so no round may leave voter 1 out, however busy
	 * its connections. Four threads lock such keys at once over two connections per node;
	 * each lock is had. A round that counted the nodes of every voter (two of six may be
	 * left out) left the slow node out while another round used its connections, and
	 * failed.
	 */
	@Test
	void aSlowVoterIsNotLeftOutWhenTheKeysOtherVotersAreAQuorumWithIt(RedisNodes nodes) throws Exception {
		LatencyProxy slow = LatencyProxy.to(node(nodes, 1, 0), Duration.ZERO);
		List<String> uris = new ArrayList<>(nodes.uris());
		uris.set(SHARDS, slow.uri());
		ExecutorService threads = Executors.newFixedThreadPool(4);
		// two connections per node for four threads: rounds often find the slow node's
		// connections all in use
		RedlockSettings settings = TestSupport.SETTINGS.toBuilder()
			.nodeTimeout(Duration.ofSeconds(3))
			.poolMaxTotal(2)
			.poolMaxIdle(2)
			.build();
		try (Redlock redlock = sharded(uris, settings)) {
			TestSupport.awaitWarmPools(redlock);
			node(nodes, 0, 0).kill();
			// known down (its reconnect back-off, 12 s, outlasts the test): a round that
			// is still connecting to it cannot know it, and may leave the slow node out
			TestSupport.awaitTrue("voter 0's shard 0 known down", Duration.ofSeconds(10), () -> {
				redlock.tryAcquire(resourceOnShard(0), Duration.ofSeconds(30)).ifPresent(Lease::release);
				return redlock.internals().group().pools().get(0).isDown();
			});
			slow.delay(Duration.ofMillis(100));
			List<CompletableFuture<List<String>>> locks = new ArrayList<>();
			for (int thread = 0; thread < 4; thread++) {
				int first = thread * 1000;
				locks.add(CompletableFuture.supplyAsync(() -> {
					List<String> failures = new ArrayList<>();
					for (int i = 0; i < 8; i++) {
						try {
							redlock.acquire(resourceOnShard(0, first + i), Duration.ofSeconds(30), Duration.ZERO)
								.release();
						}
						catch (LockNotAcquiredException ex) {
							failures.add(ex.getMessage());
						}
					}
					return failures;
				}, threads));
			}
			for (CompletableFuture<List<String>> lock : locks) {
				assertThat(lock.get(60, TimeUnit.SECONDS)).as("the locks of a thread not had").isEmpty();
			}
		}
		finally {
			threads.shutdownNow();
			slow.close();
			node(nodes, 0, 0).restart();
		}
	}

	@Test
	void fencingTokensRiseFromOneHolderToTheNextOnEitherShard(RedisNodes nodes) {
		try (Redlock a = sharded(nodes); Redlock b = sharded(nodes)) {
			for (String resource : List.of(resourceOnShard(0), resourceOnShard(1))) {
				long previous = 0;
				for (int holder = 0; holder < 10; holder++) {
					Redlock redlock = (holder % 2 == 0) ? a : b;
					LockRequest fenced = LockRequest.of(resource, Duration.ofSeconds(30)).fenced();
					try (Lease lease = redlock.acquire(fenced, Duration.ZERO)) {
						long token = lease.fencingToken().orElseThrow();
						assertThat(token).as(resource + ", holder " + holder).isGreaterThan(previous);
						previous = token;
					}
				}
				// the counter shares the lock's hash tag: on the node of each voter that
				// serves the lock (the last voter's grant may land after the round)
				String counter = ClusterKeys.fenceKey(TestSupport.PREFIX + resource);
				int shard = shardOf(counter);
				long last = previous;
				for (int voter = 0; voter < VOTERS; voter++) {
					RedisNode serving = node(nodes, voter, shard);
					TestSupport.awaitTrue(counter + " at " + last + " on " + serving.uri(), Duration.ofSeconds(10),
							() -> count(serving.command("GET", counter)) >= last);
					assertThat(node(nodes, voter, 1 - shard).command("EXISTS", counter)).isEqualTo("0");
				}
			}
		}
	}

	@Test
	void aWaiterGetsTheLockWhenItsHolderReleasesIt(RedisNodes nodes) throws Exception {
		try (Redlock a = sharded(nodes); Redlock b = sharded(nodes)) {
			Lease held = a.acquire("awaited", Duration.ofSeconds(30), Duration.ZERO);
			CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> {
				try (Lease lease = b.acquire("awaited", Duration.ofSeconds(30), Duration.ofSeconds(20))) {
					return lease.isValid();
				}
			});
			TestSupport.awaitTrue("b waits", Duration.ofSeconds(10), () -> b.waitingThreads() == 1);
			held.release();
			assertThat(waiter.get(20, TimeUnit.SECONDS)).isTrue();
		}
	}

	@Test
	void startupChecksCountVotersNotNodes(RedisNodes nodes) {
		try (Redlock redlock = sharded(nodes)) {
			assertThat(redlock.verifyNodes()).as("3 voters of 2 nodes each are an odd count")
				.noneMatch((finding) -> finding.message().contains("odd number"));
		}
		// both nodes of voter 0 refuse the user: one voter of three, a warning each, no
		// error
		for (int voter = 1; voter < VOTERS; voter++) {
			for (int shard = 0; shard < SHARDS; shard++) {
				node(nodes, voter, shard).command("ACL", "SETUSER", "locker", "on", ">pw", "~*", "&*", "+@all");
			}
		}
		Redlock.Builder builder = Redlock.builder().settings(TestSupport.SETTINGS);
		for (int voter = 0; voter < VOTERS; voter++) {
			builder.shardedVoter(List.of(asLocker(node(nodes, voter, 0)), asLocker(node(nodes, voter, 1))));
		}
		try (Redlock redlock = builder.build()) {
			List<NodeFinding> findings = redlock.verifyNodes();
			assertThat(findings).noneMatch((finding) -> finding.severity() == NodeFinding.Severity.ERROR);
			// one warning per node, each naming its voter: nodes[0]
			assertThat(findings).filteredOn((finding) -> finding.message().contains("WRONGPASS"))
				.extracting(NodeFinding::node)
				.containsExactly(0, 0);
		}
		finally {
			for (int voter = 1; voter < VOTERS; voter++) {
				for (int shard = 0; shard < SHARDS; shard++) {
					node(nodes, voter, shard).command("ACL", "DELUSER", "locker");
				}
			}
		}
	}

	private static String asLocker(RedisNode node) {
		return node.uri().replace("redis://", "redis://locker:pw@");
	}

	private static Redlock sharded(RedisNodes nodes) {
		return sharded(nodes.uris(), TestSupport.SETTINGS);
	}

	/**
	 * Three voters of two nodes each, from six URIs in voter order (voter 0's shard 0,
	 * its shard 1, then voter 1's).
	 */
	static Redlock sharded(List<String> uris, RedlockSettings settings) {
		Redlock.Builder builder = Redlock.builder().settings(settings);
		for (int voter = 0; voter < VOTERS; voter++) {
			builder.shardedVoter(uris.subList(voter * SHARDS, (voter + 1) * SHARDS));
		}
		return builder.build();
	}

	static RedisNode node(RedisNodes nodes, int voter, int shard) {
		return nodes.node(voter * SHARDS + shard);
	}

	/** A fencing counter's count, 0 when there is none. */
	private static long count(String counter) {
		return (counter != null) ? Long.parseLong(counter.split(" ")[0]) : 0;
	}

	/** The shard of two that serves a key: the first serves slots 0 to 8,191. */
	private static int shardOf(String key) {
		return (HashSlot.of(key) < HashSlot.SLOTS / 2) ? 0 : 1;
	}

	static String resourceOnShard(int shard) {
		return resourceOnShard(shard, 0);
	}

	/** The first resource of shard's keys from the given number on. */
	static String resourceOnShard(int shard, int from) {
		for (int i = from;; i++) {
			if (shardOf(TestSupport.PREFIX + "on-shard-" + i) == shard) {
				return "on-shard-" + i;
			}
		}
	}

}
