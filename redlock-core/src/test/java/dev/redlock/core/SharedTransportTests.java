package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rounds over one connection per node shared by every caller: many threads keep one
 * holder at a time over as many connections as there are nodes; a frozen node holds up no
 * caller beyond its own round's deadline, its stalled connection is replaced, and once it
 * thaws it counts again; a slow node's late replies are read and what it holds of ours is
 * removed.
 */
@WithRedisNodes(count = 5)
class SharedTransportTests {

	private static final Duration TTL = Duration.ofSeconds(10);

	private static final RedlockSettings SHARED = TestSupport.SETTINGS.toBuilder()
		.transport(RedlockSettings.Transport.SHARED)
		.poolMinIdle(0)
		.build();

	@ParameterizedTest(name = "{0}")
	@EnumSource(value = RedlockSettings.Transport.class, names = { "SHARED", "PIPELINED" })
	void manyThreadsKeepOneHolderAtATime(RedlockSettings.Transport transport, RedisNodes nodes) throws Exception {
		RedlockSettings settings = SHARED.toBuilder().transport(transport).build();
		try (Redlock redlock = TestSupport.redlock(nodes, settings)) {
			AtomicInteger holders = new AtomicInteger();
			AtomicInteger overlaps = new AtomicInteger();
			AtomicInteger acquired = new AtomicInteger();
			ConcurrentLinkedQueue<Throwable> failed = new ConcurrentLinkedQueue<>();
			int threads = 16;
			CountDownLatch start = new CountDownLatch(1);
			List<Thread> workers = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int thread = t;
				Thread worker = new Thread(() -> {
					try {
						start.await();
						for (int i = 0; i < 100; i++) {
							// half the threads on one contended key, half on keys of
							// their own
							String key = (thread % 2 == 0) ? "contended" : "own-" + thread + "-" + i;
							Lease lease = redlock.tryAcquire(key, TTL).orElse(null);
							if (lease == null) {
								continue;
							}
							acquired.incrementAndGet();
							if (key.equals("contended") && holders.incrementAndGet() > 1) {
								overlaps.incrementAndGet();
							}
							if (key.equals("contended")) {
								holders.decrementAndGet();
							}
							lease.release();
						}
					}
					catch (Throwable ex) {
						failed.add(ex);
					}
				}, "worker-" + t);
				worker.start();
				workers.add(worker);
			}
			start.countDown();
			for (Thread worker : workers) {
				worker.join(TimeUnit.SECONDS.toMillis(120));
				assertThat(worker.isAlive()).as("%s finished", worker.getName()).isFalse();
			}
			assertThat(failed).isEmpty();
			assertThat(overlaps.get()).isZero();
			// every own key, and the contended one now and then
			assertThat(acquired.get()).isGreaterThanOrEqualTo(threads / 2 * 100);
			// a node whose release the round did not wait for deletes the key a moment
			// later (the TTL is far longer than this wait)
			TestSupport.awaitNoKeys(nodes);
			if (transport == RedlockSettings.Transport.SHARED) {
				// connections follow the nodes, not the threads: one each, rounds and
				// releases alike
				for (RedisNode node : nodes.nodes()) {
					assertThat(ourConnections(node)).as("connections to %s", node.uri()).isEqualTo(1);
				}
			}
		}
	}

	@Test
	void aFrozenNodeHoldsUpNoCallerAndItsStalledConnectionIsReplaced(RedisNodes nodes) throws Exception {
		Duration nodeTimeout = Duration.ofMillis(300);
		RedlockSettings settings = SHARED.toBuilder().nodeTimeout(nodeTimeout).build();
		ExecutorService callers = Executors.newFixedThreadPool(8);
		try (Redlock redlock = TestSupport.redlock(nodes, settings)) {
			redlock.acquire("warm-up", TTL, Duration.ZERO).release();
			List<String> before = ourClientIds(nodes.node(0));
			assertThat(before).as("the shared connection to node 0").hasSize(1);
			nodes.node(0).pause();
			try {
				// frozen for several node timeouts, so that its connection stalls
				long frozenUntil = System.nanoTime() + nodeTimeout.multipliedBy(4).toNanos();
				List<CompletableFuture<Long>> rounds = new ArrayList<>();
				for (int t = 0; t < 8; t++) {
					int thread = t;
					rounds.add(CompletableFuture.supplyAsync(() -> {
						long slowest = 0;
						for (int i = 0; System.nanoTime() - frozenUntil < 0; i++) {
							long start = System.nanoTime();
							Lease lease = redlock.acquire("frozen-" + thread + "-" + i, TTL, Duration.ZERO);
							lease.release();
							slowest = Math.max(slowest, System.nanoTime() - start);
						}
						return slowest;
					}, callers));
				}
				for (CompletableFuture<Long> round : rounds) {
					// two rounds, each settled by the four others: never a wait for the
					// frozen node beyond a round's own deadline, with room for a loaded
					// machine
					assertThat(Duration.ofNanos(round.get(60, TimeUnit.SECONDS)))
						.isLessThan(nodeTimeout.multipliedBy(2).plusMillis(500));
				}
				// its stalled calls measured it, as timed-out reads over pooled
				// connections do: renewal and clean-up rounds, which go over those, stop
				// waiting for it (they read a node expected soon until their deadline)
				TestSupport.awaitTrue("node 0 measured as taking at least a node timeout", Duration.ofSeconds(10),
						() -> redlock.internals().expectedLatencies().get(0) >= nodeTimeout.toMillis(),
						() -> "expected latencies (ms) " + redlock.internals().expectedLatencies());
			}
			finally {
				nodes.node(0).resume();
			}
			// the stalled connection was closed and another opened: once thawed, the node
			// holds locks again, over a connection that is not the old one
			TestSupport.awaitTrue("the thawed node holds a lock again", Duration.ofSeconds(30), () -> {
				Lease lease = redlock.acquire("thawed", TTL, Duration.ZERO);
				try {
					return "1".equals(nodes.node(0).command("EXISTS", lockKey("thawed")));
				}
				finally {
					lease.release();
				}
			});
			// the old one closed by us: gone once the thawed node read its end (pooled
			// connections of the clean-up may have come beside the new one)
			TestSupport.awaitTrue("the stalled connection closed", Duration.ofSeconds(10),
					() -> ourClientIds(nodes.node(0)).stream().noneMatch(before::contains));
			TestSupport.awaitNoKeys(nodes);
		}
		finally {
			callers.shutdownNow();
		}
	}

	@Test
	void aSlowNodesLateRepliesAreReadAndNothingOfOursStays(RedisNodes nodes) throws Exception {
		try (LatencyProxy slow = LatencyProxy.to(nodes.node(4), Duration.ZERO)) {
			List<String> uris = new ArrayList<>(nodes.uris());
			uris.set(4, slow.uri());
			RedlockSettings settings = SHARED.toBuilder().nodeTimeout(Duration.ofSeconds(3)).build();
			try (Redlock redlock = Redlock.builder().nodes(uris).settings(settings).build()) {
				// counted before the warm-up: its release returns once a quorum has
				// deleted the key, maybe before node 4 ran it
				long setsBefore = calls(nodes.node(4), "set");
				long releasesBefore = releases(nodes.node(4));
				redlock.acquire("warm-up", TTL, Duration.ZERO).release();
				slow.delay(Duration.ofMillis(750));
				for (int i = 0; i < 5; i++) {
					long start = System.nanoTime();
					Lease lease = redlock.acquire("slow-" + i, TTL, Duration.ZERO);
					lease.release();
					assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(750));
				}
				// the slow node got every SET and every release behind it (the warm-up's
				// and the five), their late replies read off the callers' threads, and
				// holds nothing of ours
				TestSupport.awaitTrue("the slow node's late calls ran", Duration.ofSeconds(30),
						() -> calls(nodes.node(4), "set") - setsBefore >= 6
								&& releases(nodes.node(4)) - releasesBefore >= 6);
				assertThat(TestSupport.keysOn(nodes.node(4))).isZero();
				assertThat(slow.acceptedConnections()).as("one shared connection to the slow node").isEqualTo(1);
			}
		}
		TestSupport.awaitNoKeys(nodes);
	}

	/** The calls of a release, by script or by a native command. */
	private static long releases(RedisNode node) {
		return calls(node, "evalsha") + calls(node, "delex") + calls(node, "delifeq");
	}

	private static long calls(RedisNode node, String command) {
		RedisNode.CommandStat stat = node.commandStats().get(command);
		return (stat != null) ? stat.calls() : 0;
	}

	private static String lockKey(String resource) {
		return SHARED.keyPrefix() + resource;
	}

	/** Our connections to a node, by their client name, the test's own left out. */
	private static long ourConnections(RedisNode node) {
		return ourClientIds(node).size();
	}

	private static List<String> ourClientIds(RedisNode node) {
		return node.command("CLIENT", "LIST")
			.lines()
			.filter((client) -> client.contains(" name=" + SHARED.clientName() + " "))
			.map((client) -> client.substring(0, client.indexOf(' ')))
			.toList();
	}

}
