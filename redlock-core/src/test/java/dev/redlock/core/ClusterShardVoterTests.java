package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.protocol.ClusterKeys;
import dev.redlock.core.internal.protocol.KeyLayout;
import dev.redlock.test.RedisCluster;
import dev.redlock.test.RedisNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Cluster voters ({@code redis-cluster://}): three clusters of three shards, each one
 * voter whose shard nodes are read from its slot map when the {@code Redlock} is built. A
 * cluster node refuses a key of another node's slots ({@code MOVED}) and a script whose
 * keys are in two slots ({@code CROSSSLOT}), so these tests show the tagged key layout
 * doing what a cluster voter needs: a lock and its fencing counter on the shard the lock
 * key's slot picks, in every cluster; each node's marker in a slot of its own. Last, the
 * scale figure: the lock load of 10,000 distinct keys spreads evenly over the shards.
 */
class ClusterShardVoterTests {

	private static final int CLUSTERS = 3;

	private static final int SHARDS = 3;

	/** Commands a connection's greeting or the test itself sends, not a lock's. */
	private static final Set<String> NOT_LOCK_COMMANDS = Set.of("info", "cluster", "client", "hello", "script", "ping",
			"command", "config", "auth", "select", "exists", "get", "pttl", "keys", "dbsize", "flushall");

	/** The commands a client sends to take and give back a lock, native ones included. */
	private static final Set<String> TOP_LEVEL_LOCK_COMMANDS = Set.of("set", "evalsha", "eval", "delifeq", "delex");

	private static final List<RedisCluster> clusters = new ArrayList<>();

	@BeforeAll
	static void startClusters() {
		for (int i = 0; i < CLUSTERS; i++) {
			clusters.add(RedisCluster.start(SHARDS, 0));
		}
	}

	@AfterAll
	static void stopClusters() {
		clusters.forEach(RedisCluster::close);
	}

	@Test
	void aLockAndItsCounterAreOnTheShardItsSlotPicksInEveryCluster() {
		try (Redlock redlock = clusterVoters(); Redlock other = clusterVoters()) {
			for (int i = 0; i < 30; i++) {
				String resource = "orders:" + i;
				LockRequest fenced = LockRequest.of(resource, Duration.ofSeconds(30)).fenced();
				try (Lease lease = redlock.acquire(fenced, Duration.ZERO)) {
					assertThat(lease.fencingToken()).isPresent();
					assertThat(other.tryAcquire(resource, Duration.ofSeconds(30))).as(resource + " held").isEmpty();
					String key = ClusterKeys.lockKey(TestSupport.PREFIX + resource);
					assertThat(lease.redisKey()).isEqualTo(key);
					for (RedisCluster cluster : clusters) {
						// the round returns once a quorum granted: the third cluster's
						// grant may land a moment later
						RedisNode serving = cluster.primaryOf(cluster.shardOf(key));
						TestSupport.awaitTrue(key + " on " + serving.uri(), Duration.ofSeconds(10),
								() -> "1".equals(serving.command("EXISTS", key)) && "1".equals(serving.command("EXISTS",
										ClusterKeys.fenceKey(TestSupport.PREFIX + resource))));
					}
				}
				Optional<Lease> next = other.tryAcquire(resource, Duration.ofSeconds(30));
				assertThat(next).as(resource + " released").isPresent();
				next.get().release();
			}
		}
		awaitNoLocks();
	}

	@Test
	void extensionsReleasesAndWaitersWorkAcrossTheShards() throws Exception {
		try (Redlock a = clusterVoters(); Redlock b = clusterVoters()) {
			List<Lease> leases = new ArrayList<>();
			for (int i = 0; i < 30; i++) {
				leases.add(a.acquire("batch-" + i, Duration.ofSeconds(5), Duration.ZERO));
			}
			for (Lease lease : leases) {
				assertThat(lease.extend(Duration.ofSeconds(60))).as(lease.redisKey()).isTrue();
			}
			CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> {
				try (Lease lease = b.acquire("batch-0", Duration.ofSeconds(30), Duration.ofSeconds(20))) {
					return lease.isValid();
				}
			});
			TestSupport.awaitTrue("b waits", Duration.ofSeconds(10), () -> b.waitingThreads() == 1);
			// released from 6 threads at once: releases waiting together go as batches,
			// one per key range
			ExecutorService threads = Executors.newFixedThreadPool(6);
			try {
				CompletableFuture
					.allOf(leases.stream()
						.map((lease) -> CompletableFuture.runAsync(lease::release, threads))
						.toArray(CompletableFuture[]::new))
					.get(30, TimeUnit.SECONDS);
			}
			finally {
				threads.shutdown();
			}
			assertThat(leases).noneMatch(Lease::isValid);
			assertThat(waiter.get(20, TimeUnit.SECONDS)).as("b's waiter, woken by a release").isTrue();
		}
		awaitNoLocks();
	}

	/**
	 * With the restart quarantine on, each primary keeps its marker under a key in its
	 * own slots, read by the judged scripts and probes of every voter. A primary that
	 * forgets (FLUSHALL) is re-seeded with the counters of its slots, one call per slot
	 * (a cluster refuses a call that declares counters of several slots), and the next
	 * token of a lock on it is above the last one.
	 */
	@Test
	void withTheQuarantineOnEachPrimaryKeepsItsMarkerInItsSlotsAndOneThatForgotIsReseeded() {
		RedlockSettings settings = TestSupport.withQuarantine(Duration.ofSeconds(2));
		List<String> resources = new ArrayList<>();
		for (int i = 0; resources.size() < 12; i++) {
			// a dozen locks on the first shard of the first cluster, of a dozen slots
			if (clusters.get(0).shardOf(ClusterKeys.lockKey(TestSupport.PREFIX + "judged-" + i)) == 0) {
				resources.add("judged-" + i);
			}
		}
		Map<String, Long> tokens = new HashMap<>();
		try (Redlock a = clusterVoters(settings)) {
			ForgetfulNodes.awaitCounting(a);
			for (RedisCluster cluster : clusters) {
				for (int shard = 0; shard < SHARDS; shard++) {
					String marker = markerOf(shard);
					assertThat(cluster.shardOf(marker)).as(marker).isEqualTo(shard);
					assertThat(cluster.primaryOf(shard).command("EXISTS", marker)).as(marker + " on shard " + shard)
						.isEqualTo("1");
				}
			}
			for (String resource : resources) {
				try (Lease lease = a.acquire(LockRequest.of(resource, Duration.ofSeconds(2)).fenced(),
						Duration.ofSeconds(10))) {
					tokens.put(resource, lease.fencingToken().orElseThrow());
				}
				a.acquire(resource + ":plain", Duration.ofSeconds(2), Duration.ofSeconds(10)).release();
			}
			// every grant read its node's own marker: one asked of another shard's slot
			// would count for nothing (the acquisitions above would fail), and none was
			// taken for an ACL denial
			for (int node = 0; node < CLUSTERS * SHARDS; node++) {
				assertThat(a.internals().group().quarantine(node).markers().foundUnreadable())
					.as("node " + node + "'s marker unreadable")
					.isFalse();
			}
		}
		RedisNode forgetful = clusters.get(0).primaryOf(0);
		forgetful.command("FLUSHALL");
		try (Redlock b = clusterVoters(settings)) {
			for (String resource : resources) {
				TestSupport.awaitTrue(resource + "'s counter re-seeded", Duration.ofSeconds(20), () -> ForgetfulNodes
					.trustedCounter(forgetful, resource, KeyLayout.TAGGED, markerOf(0)) >= tokens.get(resource));
			}
			ForgetfulNodes.awaitCounting(b);
			for (String resource : resources) {
				try (Lease lease = b.acquire(LockRequest.of(resource, Duration.ofSeconds(2)).fenced(),
						Duration.ofSeconds(10))) {
					assertThat(lease.fencingToken().orElseThrow()).as(resource).isGreaterThan(tokens.get(resource));
				}
			}
		}
		awaitNoLocks();
	}

	/**
	 * A voter's nodes serve the slots its cluster's slot map gives them, not an equal
	 * split: after a slot moves from the first shard to the second, a lock of that slot
	 * and its counter are on the second shard's primary, and every primary's marker in a
	 * slot it still serves.
	 */
	@Test
	void aVoterFollowsTheSlotMapAsReadAfterASlotMoved() {
		RedisCluster moved = clusters.get(0);
		String resource = resourceOnShard(moved, 0);
		String key = ClusterKeys.lockKey(TestSupport.PREFIX + resource);
		int slot = moved.slotOf(key);
		moved.migrateSlot(slot, 1);
		try {
			try (Redlock redlock = clusterVotersAsMapped(TestSupport.withQuarantine(Duration.ofSeconds(2)))) {
				ForgetfulNodes.awaitCounting(redlock);
				try (Lease lease = redlock.acquire(LockRequest.of(resource, Duration.ofSeconds(2)).fenced(),
						Duration.ofSeconds(10))) {
					RedisNode serving = moved.primaryOf(1);
					TestSupport.awaitTrue(key + " on the shard its slot moved to", Duration.ofSeconds(10),
							() -> "1".equals(serving.command("EXISTS", key)) && "1".equals(
									serving.command("EXISTS", ClusterKeys.fenceKey(TestSupport.PREFIX + resource))));
				}
				for (int node = 0; node < CLUSTERS * SHARDS; node++) {
					String marker = redlock.internals().group().quarantine(node).markerKey();
					RedisCluster cluster = clusters.get(node / SHARDS);
					assertThat(cluster.shardOf(marker)).as(marker).isEqualTo(node % SHARDS);
					assertThat(redlock.internals().group().quarantine(node).markers().foundUnreadable()).isFalse();
				}
			}
		}
		finally {
			moved.migrateSlot(slot, 0);
		}
		awaitNoLocks();
	}

	/** A resource whose lock key is in a shard's slots. */
	static String resourceOnShard(RedisCluster cluster, int shard) {
		for (int i = 0;; i++) {
			if (cluster.shardOf(ClusterKeys.lockKey(TestSupport.PREFIX + "moving-" + i)) == shard) {
				return "moving-" + i;
			}
		}
	}

	/** One voter per cluster, its primaries serving the slots its slot map says now. */
	/**
	 * Cluster voters built after a slot moved: each reads its cluster's slot map when the
	 * {@code Redlock} is built.
	 */
	private static Redlock clusterVotersAsMapped(RedlockSettings settings) {
		return clusterVoters(settings);
	}

	/** The marker key of a shard's primary: in the shard's slots. */
	private static String markerOf(int shard) {
		return KeyLayout.TAGGED.markerKey(RedisCluster.SLOTS * shard / SHARDS,
				RedisCluster.SLOTS * (shard + 1) / SHARDS - 1);
	}

	/**
	 * The scale figure of issue 51: over 10,000 distinct lock keys, every cluster's
	 * shards each take the same share of the lock commands, within 20 %. It also prints
	 * the time each shard spent on a lock's top-level commands ({@code usec} of
	 * {@code INFO commandstats}): what bounds the locks per second one shard carries.
	 */
	@Test
	void theLockLoadOfDistinctKeysSpreadsEvenlyOverEveryClustersShards() throws Exception {
		Map<RedisNode, RedisNode.CommandStat> before = lockCommands();
		int keys = 10_000;
		long start = System.nanoTime();
		try (Redlock redlock = clusterVoters()) {
			ExecutorService threads = Executors.newFixedThreadPool(4);
			try {
				List<CompletableFuture<Void>> work = new ArrayList<>();
				for (int t = 0; t < 4; t++) {
					int first = t;
					work.add(CompletableFuture.runAsync(() -> {
						for (int i = first; i < keys; i += 4) {
							redlock.acquire("load-" + i, Duration.ofSeconds(30), Duration.ofSeconds(10)).release();
						}
					}, threads));
				}
				CompletableFuture.allOf(work.toArray(CompletableFuture[]::new)).get(5, TimeUnit.MINUTES);
			}
			finally {
				threads.shutdown();
			}
		}
		long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
		Map<RedisNode, RedisNode.CommandStat> after = lockCommands();
		StringBuilder figure = new StringBuilder(keys + " locks in " + millis + " ms; lock commands per shard");
		StringBuilder serverTime = new StringBuilder("; a shard's time per lock (µs):");
		for (int c = 0; c < CLUSTERS; c++) {
			long least = Long.MAX_VALUE;
			long most = 0;
			for (int shard = 0; shard < SHARDS; shard++) {
				RedisNode primary = clusters.get(c).primaryOf(shard);
				long calls = after.get(primary).calls() - before.get(primary).calls();
				double micros = after.get(primary).usec() - before.get(primary).usec();
				figure.append((shard == 0) ? ", cluster " + c + ": " : " / ").append(calls);
				serverTime.append((shard == 0) ? " cluster " + c + ": " : " / ")
					.append(String.format(Locale.ROOT, "%.1f", micros / (keys / (double) SHARDS)));
				least = Math.min(least, calls);
				most = Math.max(most, calls);
			}
			assertThat(least).as(figure.toString()).isGreaterThan(keys / SHARDS);
			assertThat((double) most / least).as(figure.toString()).isLessThanOrEqualTo(1.2);
		}
		System.out.println("[scale] " + figure + serverTime);
		awaitNoLocks();
	}

	/**
	 * Every cluster's primaries, with the calls of lock commands each has run so far and
	 * the time spent on the top-level ones (a script's own calls are within its time).
	 */
	private static Map<RedisNode, RedisNode.CommandStat> lockCommands() {
		Map<RedisNode, RedisNode.CommandStat> commands = new HashMap<>();
		for (RedisCluster cluster : clusters) {
			for (int shard = 0; shard < SHARDS; shard++) {
				RedisNode primary = cluster.primaryOf(shard);
				long calls = 0;
				double micros = 0;
				for (Map.Entry<String, RedisNode.CommandStat> stat : primary.commandStats().entrySet()) {
					String command = stat.getKey().split("\\|")[0];
					if (!NOT_LOCK_COMMANDS.contains(command)) {
						calls += stat.getValue().calls();
					}
					if (TOP_LEVEL_LOCK_COMMANDS.contains(command)) {
						micros += stat.getValue().usec();
					}
				}
				commands.put(primary, new RedisNode.CommandStat(calls, micros));
			}
		}
		return commands;
	}

	/** Waits until no lock key is left on any primary; counters stay, as they should. */
	private static void awaitNoLocks() {
		TestSupport.awaitTrue("no lock key left on any shard", Duration.ofSeconds(10), () -> {
			for (RedisCluster cluster : clusters) {
				for (int shard = 0; shard < SHARDS; shard++) {
					String left = cluster.primaryOf(shard).command("KEYS", "{" + TestSupport.PREFIX + "*}");
					if (left != null && !left.isEmpty()) {
						return false;
					}
				}
			}
			return true;
		});
	}

	/** One voter per cluster: its primaries, in slot order. */
	private static Redlock clusterVoters() {
		return clusterVoters(TestSupport.SETTINGS);
	}

	private static Redlock clusterVoters(RedlockSettings settings) {
		Redlock.Builder builder = Redlock.builder().settings(settings);
		clusters.forEach((cluster) -> builder.node(cluster.uri()));
		return builder.build();
	}

}
