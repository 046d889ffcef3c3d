package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.redlock.core.internal.AcquireAttempt;
import dev.redlock.core.internal.round.NodeReply;
import dev.redlock.core.internal.transport.NodeConnectionPool;
import dev.redlock.core.internal.transport.PipelinedConnection;
import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A slow or frozen minority costs the caller nothing: acquire, release and extend return
 * once the fast nodes have decided, wherever the slow nodes are in the list; what the
 * slow nodes owe is read, and cleaned up, off the caller's path, leaving nothing of ours
 * behind; a slow but alive node keeps its connections.
 */
@WithRedisNodes(count = 5)
class SlowMinorityTests {

	/**
	 * Far longer than a loaded 2-core machine keeps a healthy node's reply waiting, so
	 * that a round that waited for a slow node cannot be mistaken for one that waited for
	 * a busy CPU.
	 */
	private static final Duration ONE_WAY = Duration.ofMillis(750);

	private static final Duration TTL = Duration.ofSeconds(10);

	/** Long enough that the slow nodes answer in time: slow, not failed. */
	private final RedlockSettings settings = TestSupport.SETTINGS.withNodeTimeout(Duration.ofSeconds(3));

	/**
	 * Two of five nodes answer 1.5 s late (first, middle or last in the list): every
	 * acquire, extend and release returns well before that, the slow nodes still get
	 * every command (their late replies are read off the caller's thread), each keeps the
	 * connection it has, and no key is left anywhere.
	 */
	@ParameterizedTest(name = "slow nodes {0}")
	@ValueSource(strings = { "0,1", "1,3", "3,4" })
	void aSlowMinorityDelaysNoRound(String slowNodes, RedisNodes nodes) {
		List<Integer> slow = List.of(slowNodes.split(",")).stream().map(Integer::valueOf).toList();
		List<LatencyProxy> proxies = new ArrayList<>();
		List<String> uris = new ArrayList<>();
		for (int i = 0; i < nodes.size(); i++) {
			if (slow.contains(i)) {
				LatencyProxy proxy = LatencyProxy.to(nodes.node(i), Duration.ZERO);
				proxies.add(proxy);
				uris.add(proxy.uri());
			}
			else {
				uris.add(nodes.node(i).uri());
			}
		}
		try (Redlock redlock = Redlock.builder().nodes(uris).settings(this.settings).build()) {
			// connections opened while the proxies are fast; then the slow nodes are
			// measured once
			redlock.acquire("warm-up", TTL, Duration.ZERO).release();
			// the connections opened in advance are all there before the count starts
			TestSupport.awaitWarmPools(redlock);
			proxies.forEach((proxy) -> proxy.delay(ONE_WAY));
			redlock.acquire("measure", TTL, Duration.ZERO).release();
			// the round that finds a node lagging may pay its round trip once (see How
			// it behaves); its late reply measures the node, which can come after the
			// next round began: wait for it, so that every round below knows
			TestSupport.awaitTrue("the slow nodes measured", Duration.ofSeconds(10),
					() -> slow.stream().allMatch((i) -> redlock.internals().expectedLatencies().get(i) > 100));
			int acceptedBefore = accepted(proxies);

			long slowest = 0;
			for (int i = 0; i < 10; i++) {
				long start = System.nanoTime();
				Lease lease = redlock.acquire("slow-minority-" + i, TTL, Duration.ZERO);
				slowest = Math.max(slowest, System.nanoTime() - start);
				start = System.nanoTime();
				assertThat(lease.extend()).isTrue();
				slowest = Math.max(slowest, System.nanoTime() - start);
				start = System.nanoTime();
				assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
				slowest = Math.max(slowest, System.nanoTime() - start);
			}
			System.out.printf("[slow minority %s] slowest acquire, extend or release: %.1f ms (one way to the slow "
					+ "nodes: %d ms)%n", slowNodes, slowest / 1e6, ONE_WAY.toMillis());
			// a round that waited for a slow node would take its round trip, twice this
			assertThat(Duration.ofNanos(slowest)).as("no round waited for a slow node").isLessThan(ONE_WAY);
			// nor was a fast node taken for a slow one: a reply that waited while a round
			// read a slow node is as old as that node's round trip, not its own
			for (int i = 0; i < nodes.size(); i++) {
				if (!slow.contains(i)) {
					assertThat(redlock.internals().expectedLatencies().get(i)).as("node %d's expected latency, ms", i)
						.isLessThan(ONE_WAY.toMillis() / 2.0);
				}
			}

			TestSupport.awaitTrue("nothing of ours is left on any node", Duration.ofSeconds(10),
					() -> TestSupport.keysOnNodes(nodes) == 0);
			// a slow node's connection is busy while its late replies come in, so a few
			// more may be opened, but
			// never one per round
			assertThat(accepted(proxies) - acceptedBefore).as("connections opened to the slow nodes")
				.isLessThanOrEqualTo(2 * slow.size());
		}
		finally {
			proxies.forEach(LatencyProxy::close);
		}
	}

	/**
	 * Slow nodes are left out of a round only while they are a minority: with three of
	 * five slow and their connections busy with other threads' rounds, a round still
	 * waits for one of them, since the two fast nodes alone are no quorum.
	 */
	@Test
	void aSlowMajorityIsWaitedFor(RedisNodes nodes) throws Exception {
		List<LatencyProxy> proxies = new ArrayList<>();
		List<String> uris = new ArrayList<>(nodes.uris());
		try {
			for (int i = 0; i < 3; i++) {
				LatencyProxy proxy = LatencyProxy.to(nodes.node(i), Duration.ofMillis(30));
				proxies.add(proxy);
				uris.set(i, proxy.uri());
			}
			try (Redlock redlock = Redlock.builder().nodes(uris).settings(this.settings).build()) {
				redlock.acquire("slow-majority-warm-up", TTL, Duration.ZERO).release();
				List<TestThreads.Running<Integer>> threads = new ArrayList<>();
				for (int t = 0; t < 8; t++) {
					String keys = "slow-majority-" + t + "-";
					threads.add(TestThreads.start(false, () -> {
						for (int i = 0; i < 3; i++) {
							redlock.acquire(keys + i, TTL, Duration.ZERO).release();
						}
						return 3;
					}));
				}
				for (TestThreads.Running<Integer> thread : threads) {
					assertThat(thread.await(Duration.ofSeconds(10))).as("locks taken by one thread").isEqualTo(3);
				}
			}
		}
		finally {
			proxies.forEach(LatencyProxy::close);
		}
	}

	/**
	 * Fenced locks too, with their three rounds (the grant, the confirmation of its
	 * token, the release): with two of five nodes 1.5 s late, no fenced acquisition or
	 * release waits for them, tokens still grow, the lock key is left nowhere, and a lock
	 * opens no connection of its own to a slow node.
	 */
	@Test
	void aSlowMinorityDelaysNoFencedLock(RedisNodes nodes) {
		List<LatencyProxy> proxies = new ArrayList<>();
		List<String> uris = new ArrayList<>(nodes.uris());
		try {
			for (int i : new int[] { 1, 3 }) {
				LatencyProxy proxy = LatencyProxy.to(nodes.node(i), Duration.ZERO);
				proxies.add(proxy);
				uris.set(i, proxy.uri());
			}
			try (Redlock redlock = Redlock.builder().nodes(uris).settings(this.settings).build()) {
				LockRequest request = LockRequest.of("slow-minority-fenced", TTL).fenced();
				redlock.acquire(request, Duration.ZERO).release();
				TestSupport.awaitWarmPools(redlock);
				proxies.forEach((proxy) -> proxy.delay(ONE_WAY));
				redlock.acquire(request, Duration.ZERO).release();
				TestSupport.awaitTrue("the slow nodes measured", Duration.ofSeconds(10), () -> {
					List<Double> latencies = redlock.internals().expectedLatencies();
					return latencies.get(1) > 100 && latencies.get(3) > 100;
				});
				int acceptedBefore = accepted(proxies);

				long slowest = 0;
				long lastToken = 0;
				for (int i = 0; i < 10; i++) {
					long start = System.nanoTime();
					Lease lease = redlock.acquire(request, Duration.ZERO);
					slowest = Math.max(slowest, System.nanoTime() - start);
					assertThat(lease.fencingToken().getAsLong()).as("token").isGreaterThan(lastToken);
					lastToken = lease.fencingToken().getAsLong();
					start = System.nanoTime();
					assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
					slowest = Math.max(slowest, System.nanoTime() - start);
				}
				assertThat(Duration.ofNanos(slowest)).as("no round waited for a slow node").isLessThan(ONE_WAY);
				TestSupport.awaitTrue("the lock key is left on no node", Duration.ofSeconds(10),
						() -> nodes.nodes()
							.stream()
							.allMatch((node) -> "0".equals(node.command("EXISTS", "redlock:slow-minority-fenced"))));
				assertThat(accepted(proxies) - acceptedBefore).as("connections opened to the slow nodes")
					.isLessThanOrEqualTo(2 * proxies.size());
			}
		}
		finally {
			proxies.forEach(LatencyProxy::close);
		}
	}

	/**
	 * Two frozen nodes (SIGSTOP) cost no round a node timeout, and get their clean-up
	 * once they wake up.
	 */
	@Test
	void aFrozenMinorityDelaysNoRoundAndIsCleanedUpWhenItWakes(RedisNodes nodes) {
		// a round that waited for a frozen node would take this long: far more than a
		// busy CPU delays a healthy one
		Duration nodeTimeout = Duration.ofSeconds(1);
		RedlockSettings settings = TestSupport.SETTINGS.withNodeTimeout(nodeTimeout);
		try (Redlock redlock = TestSupport.redlock(nodes, settings)) {
			redlock.acquire("warm-up", TTL, Duration.ZERO).release();
			nodes.nodes(1, 3).forEach(RedisNode::pause);
			try {
				// the first round finds them frozen (one node timeout), the others do not
				// wait
				redlock.acquire("find-out", TTL, Duration.ZERO).release();
				long slowest = 0;
				for (int i = 0; i < 10; i++) {
					long start = System.nanoTime();
					Lease lease = redlock.acquire("frozen-minority-" + i, TTL, Duration.ZERO);
					assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
					slowest = Math.max(slowest, System.nanoTime() - start);
				}
				assertThat(Duration.ofNanos(slowest)).as("no round waited for a frozen node")
					.isLessThan(nodeTimeout.dividedBy(2));
			}
			finally {
				nodes.nodes(1, 3).forEach(RedisNode::resume);
			}
			TestSupport.awaitTrue("nothing of ours is left once the frozen nodes wake", Duration.ofSeconds(10),
					() -> TestSupport.keysOnNodes(nodes) == 0);
		}
	}

	/**
	 * A {@code SET} that was written but timed out, on a node that then has no idle
	 * connection: the lost round's clean-up cannot be written in time, so it is retried
	 * off the caller's path until the node answers.
	 */
	@Test
	void aTimedOutSetIsCleanedUpWhenTheNodeAnswersAgain(RedisNodes nodes) {
		RedlockSettings settings = TestSupport.SETTINGS.withNodeTimeout(Duration.ofMillis(100)).withPool(8, 1);
		try (Redlock redlock = TestSupport.redlock(nodes, settings)) {
			redlock.acquire("warm-up", TTL, Duration.ZERO).release();
			// held by someone else on three nodes: no quorum for us
			for (int i = 0; i < 3; i++) {
				nodes.node(i).command("SET", "redlock:k", "someone-else", "PX", "30000");
			}
			nodes.node(4).pause();
			try {
				assertThat(redlock.tryAcquire("k", TTL)).isEmpty();
			}
			finally {
				nodes.node(4).resume();
			}
			// the SET written before the freeze lands now; the clean-up must follow it
			TestSupport.awaitTrue("our value is removed from the node that timed out", Duration.ofSeconds(5),
					() -> "0".equals(nodes.node(4).command("EXISTS", "redlock:k")));
			assertThat(nodes.node(0).command("GET", "redlock:k")).isEqualTo("someone-else");
		}
	}

	/**
	 * Slow nodes are left out of a round only while they and the failed nodes are a
	 * minority, and a round writes to the slow ones last, so that a node found down among
	 * the others counts first: with two of five slow, their only connections busy with
	 * late replies, and a third node down, a round waits for a slow node, since the two
	 * left are no quorum. Written first, as listed, both slow nodes used to be left out
	 * before the down node was seen, and the round failed. The down node may look slow
	 * too (a busy machine makes a healthy node's replies late, or it is a little farther
	 * away): then it still counts before the slower nodes are left out. Ordered as
	 * listed, node 4 came after both and the round failed, as under a CPU hog about one
	 * run in six.
	 */
	@ParameterizedTest(name = "node 4 one way {0} ms")
	@ValueSource(ints = { 0, 20 })
	void slowNodesAreLeftOutOnlyOnceTheOthersAreWrittenTo(int node4DelayMillis, RedisNodes nodes) {
		List<LatencyProxy> proxies = List.of(LatencyProxy.to(nodes.node(0), Duration.ZERO),
				LatencyProxy.to(nodes.node(1), Duration.ZERO),
				LatencyProxy.to(nodes.node(4), Duration.ofMillis(node4DelayMillis)));
		List<String> uris = new ArrayList<>(nodes.uris());
		uris.set(0, proxies.get(0).uri());
		uris.set(1, proxies.get(1).uri());
		uris.set(4, proxies.get(2).uri());
		// one connection per node; time for a slow node's late reply, then for its own.
		// The pooled transport, whose rounds this is about
		RedlockSettings settings = this.settings.toBuilder()
			.nodeTimeout(Duration.ofSeconds(10))
			.poolMaxTotal(1)
			.poolMaxIdle(1)
			.transport(RedlockSettings.Transport.POOLED)
			.build();
		Duration ttl = Duration.ofMinutes(1);
		try (Redlock redlock = Redlock.builder().nodes(uris).settings(settings).build()) {
			RedlockInternals internals = redlock.internals();
			redlock.acquire("warm-up", ttl, Duration.ZERO).release();
			TestSupport.awaitWarmPools(redlock);
			proxies.get(0).delay(ONE_WAY);
			proxies.get(1).delay(ONE_WAY);
			redlock.acquire("measure", ttl, Duration.ZERO).release();
			TestSupport.awaitTrue("the slow nodes measured, cleaned up and their connections back, idle",
					Duration.ofSeconds(30),
					() -> internals.expectedLatencies().get(0) > 100 && internals.expectedLatencies().get(1) > 100
							&& TestSupport.keysOnNodes(nodes) == 0 && internals.connectionsInUse(0) == 0
							&& internals.connectionsInUse(1) == 0 && internals.idleConnections(0) == 1
							&& internals.idleConnections(1) == 1,
					() -> "expected latencies " + internals.expectedLatencies() + ", keys "
							+ TestSupport.keysByNode(nodes) + ", in use " + internals.connectionsInUse(0) + "/"
							+ internals.connectionsInUse(1) + ", idle " + internals.idleConnections(0) + "/"
							+ internals.idleConnections(1));
			if (node4DelayMillis > 0) {
				assertThat(internals.expectedLatencies().get(4)).as("node 4 looks slow, less than nodes 0 and 1")
					.isGreaterThan(4 * Math.max(internals.expectedLatencies().get(2), 5.0))
					.isLessThan(internals.expectedLatencies().get(0));
			}
			// written to both slow nodes, whose only connections now wait for its late
			// replies, for twice ONE_WAY
			Lease busy = redlock.acquire("busy", ttl, Duration.ZERO);
			proxies.get(2).close();
			NodeConnectionPool down = internals.group().pools().get(4);
			down.discardIdle();
			// known down, with no attempt to connect under way: a borrow fails at once,
			// as the round's will, before the slow nodes are considered (a connection
			// being opened in the background, to keep one idle, would leave it pending)
			TestSupport.awaitTrue("node 4 found down", Duration.ofSeconds(10), () -> {
				CompletableFuture<PipelinedConnection> borrowed = down.borrow(1_000);
				return borrowed.isCompletedExceptionally();
			});
			assertThat(List.of(internals.connectionsInUse(0), internals.connectionsInUse(1)))
				.as("the slow nodes' connections still busy")
				.containsExactly(1, 1);

			Lease lease = redlock.acquire("needs-a-slow-node", ttl, Duration.ZERO);
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
			assertThat(busy.release()).isEqualTo(ReleaseOutcome.RELEASED);
		}
		finally {
			proxies.forEach(LatencyProxy::close);
		}
	}

	/**
	 * With no idle connections at all, every round opens new ones; that time must not
	 * count as the nodes' latency, or healthy nodes look slow and are left out for good.
	 */
	@Test
	void withoutIdleConnectionsHealthyNodesAreNeverLeftOut(RedisNodes nodes) {
		nodes.node(2).kill();
		List<String> uris = List.of(nodes.node(0).uri(), nodes.node(1).uri(), nodes.node(2).uri());
		// the shared 1 s node timeout: a round that opens connections on a busy machine
		// may take longer than 100 ms without any node being slow; each lock may be
		// retried for a while, but a node left out for good fails them all
		Duration nodeTimeout = TestSupport.SETTINGS.nodeTimeout();
		RedlockSettings settings = TestSupport.SETTINGS.withPool(8, 0);
		try (Redlock redlock = Redlock.builder().nodes(uris).settings(settings).build()) {
			int acquired = 0;
			for (int i = 0; i < 10; i++) {
				try (Lease lease = redlock.acquire("no-idle-" + i, TTL, Duration.ofSeconds(2))) {
					acquired++;
				}
			}
			assertThat(acquired).isEqualTo(10);
			// a node expected to take half the node timeout or more is left out of a
			// round while connecting: the healthy nodes' time to connect was not counted
			assertThat(redlock.internals().expectedLatencies().subList(0, 2))
				.allSatisfy((millis) -> assertThat(millis).isLessThan(nodeTimeout.dividedBy(2).toMillis()));
		}
	}

	/**
	 * A node whose every connection is busy (its one slot held by the late-reply thread,
	 * waiting for a slow reply) must not eat the round's deadline while the others
	 * decide.
	 */
	@Test
	void anExhaustedPoolOnOneNodeDelaysNoRound(RedisNodes nodes) {
		try (LatencyProxy slow = LatencyProxy.to(nodes.node(0), Duration.ZERO)) {
			List<String> uris = new ArrayList<>(nodes.uris());
			uris.set(0, slow.uri());
			// the pooled transport, whose pool this is about
			RedlockSettings settings = this.settings.toBuilder()
				.poolMaxTotal(1)
				.poolMaxIdle(1)
				.transport(RedlockSettings.Transport.POOLED)
				.build();
			try (Redlock redlock = Redlock.builder().nodes(uris).settings(settings).build()) {
				redlock.acquire("warm-up", TTL, Duration.ZERO).release();
				// node 0's only connection may still be with its late-reply thread: a
				// round that cannot have it in time leaves the node out, and would
				// never measure it
				TestSupport.awaitWarmPools(redlock);
				slow.delay(ONE_WAY);
				redlock.acquire("measure", TTL, Duration.ZERO).release();
				TestSupport.awaitTrue("the slow node measured", Duration.ofSeconds(10),
						() -> redlock.internals().expectedLatencies().get(0) > 100);
				for (int i = 0; i < 5; i++) {
					long start = System.nanoTime();
					// the first leaves node 0's only connection with its late-reply
					// thread; the next ones find none
					Lease lease = redlock.acquire("exhausted-" + i, TTL, Duration.ZERO);
					assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(ONE_WAY);
					lease.release();
				}
			}
			TestSupport.awaitTrue("nothing of ours is left on any node", Duration.ofSeconds(10),
					() -> TestSupport.keysOnNodes(nodes) == 0);
		}
	}

	@Test
	void aReplyNotAwaitedMayHoldTheWriteUnlessAFollowUpWentBehindIt() {
		assertThat(AcquireAttempt.mayHoldValue(NodeReply.notAwaited(0, 1, true, false))).isTrue();
		assertThat(AcquireAttempt.mayHoldValue(NodeReply.notAwaited(0, 1, true, true))).isFalse();
		assertThat(AcquireAttempt.mayHoldValue(NodeReply.notAwaited(0, 1, false, false))).as("never written").isFalse();
		assertThat(AcquireAttempt.mayHoldValue(NodeReply.replied(0, null, 1))).as("nil: someone else's").isFalse();
	}

	private static int accepted(List<LatencyProxy> proxies) {
		return proxies.stream().mapToInt(LatencyProxy::acceptedConnections).sum();
	}

}
