package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;

import dev.redlock.core.RedlockListener.NodeRequestEvent;
import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Faults that show only over time: a node down for good, subscriptions that come and go,
 * a slow node under fenced locks, a previous holder's key expiring unevenly, bursts of
 * connections, a slow listener.
 */
@WithRedisNodes(count = 5)
class LongFaultTests {

	private static final Duration TTL = Duration.ofSeconds(10);

	@Test
	void aNodeDownForGoodLeavesNothingQueuedBehindItsConnectionAttempts(RedisNodes nodes) {
		nodes.node(4).kill();
		// a short node timeout, so that its connection is attempted often
		RedlockSettings settings = TestSupport.SETTINGS.withNodeTimeout(Duration.ofMillis(30));
		try (Redlock redlock = TestSupport.redlock(nodes, settings)) {
			long end = System.nanoTime() + Duration.ofSeconds(2).toNanos();
			int locked = 0;
			while (System.nanoTime() - end < 0) {
				try {
					redlock.acquire("down-for-good", TTL, Duration.ofSeconds(1)).release();
					locked++;
				}
				catch (LockNotAcquiredException ex) {
					// a busy machine: the next one
				}
			}
			assertThat(locked).isPositive();
			TestSupport.awaitTrue("nothing waits for a connection to the dead node", Duration.ofSeconds(5),
					() -> redlock.internals().awaitingOpen(4) == 0);
		}
	}

	@Test
	void subscriptionsThatComeAndGoScheduleOneIdleCloseNotOneEach(RedisNodes nodes) {
		try (Redlock holder = TestSupport.redlock(nodes, TestSupport.SETTINGS);
				Redlock waiter = TestSupport.redlock(nodes, TestSupport.SETTINGS)) {
			Lease held = holder.acquire("churn", TTL, Duration.ZERO);
			for (int i = 0; i < 300; i++) {
				// each wait subscribes to the key's releases, each end of it unsubscribes
				assertThatExceptionOfType(LockNotAcquiredException.class)
					.isThrownBy(() -> waiter.acquire("churn", TTL, Duration.ofMillis(1)));
			}
			// one task per node to close its idle subscription, and nothing piling up
			assertThat(waiter.internals().scheduledRuns()).isLessThanOrEqualTo(nodes.size());
			held.release();
		}
	}

	@Test
	void aFencedLockDoesNotWaitForASlowNode(RedisNodes nodes) {
		Duration oneWay = Duration.ofMillis(750);
		try (LatencyProxy slow = LatencyProxy.to(nodes.node(4), Duration.ZERO)) {
			List<String> uris = new ArrayList<>(nodes.uris());
			uris.set(4, slow.uri());
			RedlockSettings settings = TestSupport.SETTINGS.withNodeTimeout(Duration.ofSeconds(5));
			try (Redlock redlock = Redlock.builder().nodes(uris).settings(settings).build()) {
				redlock.acquire(LockRequest.of("fenced-warm-up", TTL).fenced(), Duration.ZERO).release();
				// every connection opened while the proxy is fast (see NodeFailureTests)
				TestSupport.awaitWarmPools(redlock);
				slow.delay(oneWay);
				// waited for in full once, while it still looked fast: from now on it is
				// known to lag
				redlock.acquire(LockRequest.of("fenced-measure", TTL).fenced(), Duration.ZERO).release();
				// measured by its late reply, which may come after the next round began
				TestSupport.awaitTrue("the slow node measured", Duration.ofSeconds(10),
						() -> redlock.internals().expectedLatencies().get(4) > 100);
				long slowest = 0;
				for (int i = 0; i < 5; i++) {
					long start = System.nanoTime();
					Lease lease = redlock.acquire(LockRequest.of("fenced-slow-" + i, TTL).fenced(), Duration.ZERO);
					slowest = Math.max(slowest, System.nanoTime() - start);
					assertThat(lease.fencingToken()).isPresent();
					lease.release();
				}
				// a round that waited for the slow node would take its round trip, twice
				// this
				assertThat(Duration.ofNanos(slowest)).as("slowest fenced acquisition").isLessThan(oneWay);
			}
		}
	}

	@Test
	void aPreviousHoldersKeyExpiringUnevenlyIsWaitedForNotHammered(RedisNodes nodes) {
		RedlockSettings settings = TestSupport.SETTINGS.withRetryDelay(Duration.ofMillis(100));
		AtomicInteger attempts = new AtomicInteger();
		try (Redlock a = TestSupport.redlock(nodes, settings);
				Redlock b = Redlock.builder()
					.nodes(nodes.uris())
					.settings(settings)
					.listener(TestSupport.onAcquireFinished((event) -> attempts.addAndGet(event.attempts())))
					.build()) {
			Duration held = Duration.ofSeconds(2);
			a.acquire("uneven", held, Duration.ZERO);
			// the key runs out early on two nodes: every round of B then gets two grants
			// and three refusals, as in a split vote, until the last copies expire
			for (RedisNode node : nodes.nodes(0, 1)) {
				node.command("PEXPIRE", TestSupport.PREFIX + "uneven", "1");
			}
			long start = System.nanoTime();
			b.acquire("uneven", TTL, Duration.ofSeconds(5)).release();
			Duration waited = Duration.ofNanos(System.nanoTime() - start);
			// about one attempt per retry delay (100 ms, drawn from 50 to 150), and a few
			// quick ones
			long expected = waited.toMillis() / 50 + 5;
			assertThat(attempts.get()).as("B's attempts in %d ms", waited.toMillis())
				.isLessThanOrEqualTo((int) expected);
		}
	}

	@Test
	void aReleaseKeepingTheLockForAMinimumHoldIsFinishedOnANodeThatMissedIt(RedisNodes nodes) {
		RedlockSettings settings = TestSupport.SETTINGS.withNodeTimeout(Duration.ofMillis(500));
		try (Redlock redlock = TestSupport.redlock(nodes, settings)) {
			Lease lease = redlock.acquire("kept", TTL, Duration.ZERO);
			// node 4 holds writes past the node timeout: the shortening sent to it
			// waits, its connection is closed unanswered, Redis drops the command
			nodes.node(4).pauseClients(Duration.ofSeconds(2), true);
			// UNKNOWN where a busy machine made more nodes miss the node timeout:
			// either way the key must go once the minimum hold has passed
			assertThat(lease.release(Duration.ofMillis(500))).isIn(ReleaseOutcome.RELEASED, ReleaseOutcome.UNKNOWN);
			// the key lives its minimum hold, not its TTL (10 s), on every node
			TestSupport.awaitTrue("the key gone from every node well within its TTL", Duration.ofSeconds(7),
					() -> nodes.nodes()
						.stream()
						.allMatch((node) -> "-2".equals(node.command("PTTL", TestSupport.PREFIX + "kept"))));
		}
	}

	@Test
	void repliesTricklingInByteByByteCostARoundItsNodeTimeoutNotOnePerRead(RedisNodes nodes) {
		Duration nodeTimeout = Duration.ofSeconds(1);
		List<LatencyProxy> trickling = new ArrayList<>();
		try {
			List<String> uris = new ArrayList<>(nodes.uris());
			// three of five: a quorum cannot be had without reading one of them
			for (int i = 0; i < 3; i++) {
				LatencyProxy proxy = LatencyProxy.to(nodes.node(i), Duration.ZERO);
				trickling.add(proxy);
				uris.set(i, proxy.uri());
			}
			RedlockSettings settings = TestSupport.SETTINGS.withNodeTimeout(nodeTimeout);
			try (Redlock redlock = Redlock.builder().nodes(uris).settings(settings).build()) {
				redlock.acquire("trickle-warm-up", TTL, Duration.ZERO).release();
				// each byte within the node timeout: no single read times out, while a
				// whole reply (5 bytes, "+OK\r\n") takes 4.5 s
				trickling.forEach((proxy) -> proxy.trickle(Duration.ofMillis(900)));
				long start = System.nanoTime();
				Lease lease = null;
				try {
					lease = redlock.acquire("trickle", TTL, Duration.ZERO);
				}
				catch (LockNotAcquiredException ex) {
					// no quorum in time: the expected outcome
				}
				Duration took = Duration.ofNanos(System.nanoTime() - start);
				// the bound is wait (0) + 2 x node timeout; a second more for a loaded
				// machine
				assertThat(took).as("an acquisition against trickling replies")
					.isLessThan(nodeTimeout.multipliedBy(2).plusSeconds(1));
				if (lease != null) {
					lease.release();
				}
			}
		}
		finally {
			trickling.forEach(LatencyProxy::close);
		}
	}

	@Test
	void ourOwnValueLeftByAnUnconfirmedReleaseDoesNotRefuseOurNextAcquisition(RedisNodes nodes) {
		RedlockSettings settings = TestSupport.SETTINGS.withNodeTimeout(Duration.ofMillis(500));
		try (Redlock redlock = TestSupport.redlock(nodes, settings)) {
			Lease lease = redlock.acquire("own", TTL, Duration.ZERO);
			// a majority holds writes past the node timeout: the release is
			// dropped there, and its value waits for the late clean-up
			for (RedisNode node : nodes.nodes(0, 1, 2)) {
				node.pauseClients(Duration.ofSeconds(5), true);
			}
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.UNKNOWN);
			for (RedisNode node : nodes.nodes(0, 1, 2)) {
				node.unpauseClients();
			}
			// at once, before the late clean-up's next try
			redlock.acquire("own", TTL, Duration.ZERO).release();
		}
	}

	@Test
	void connectionsOpenedForABurstCloseOnceUnused(RedisNodes nodes) throws Exception {
		// idle connections close after 100 node timeouts: 2 s here. The pooled
		// transport: with the others, a burst's rounds share one connection per node
		RedlockSettings settings = TestSupport.SETTINGS.toBuilder()
			.nodeTimeout(Duration.ofMillis(20))
			.transport(RedlockSettings.Transport.POOLED)
			.build();
		try (Redlock redlock = TestSupport.redlock(nodes, settings)) {
			List<TestThreads.Running<Integer>> burst = new ArrayList<>();
			for (int t = 0; t < 24; t++) {
				String keys = "burst-" + t + "-";
				burst.add(TestThreads.start(false, () -> {
					for (int i = 0; i < 20; i++) {
						redlock.acquire(keys + i, TTL, Duration.ofSeconds(5)).release();
					}
					return 20;
				}));
			}
			// the most connections the burst had open to one node at once (on a busy
			// machine, many are being read late right after it, not yet idle). Any node:
			// a round leaves a node that looks slow and whose connections are busy out,
			// rather than connect to it anew, so on a loaded machine one node may keep
			// few; a majority is always written to
			int peak = 0;
			long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
			while (!burst.stream().allMatch(TestThreads.Running::isDone) && System.nanoTime() - deadline < 0) {
				peak = Math.max(peak, mostOpenToOneNode(redlock));
				LockSupport.parkNanos(Duration.ofMillis(1).toNanos());
			}
			for (TestThreads.Running<Integer> thread : burst) {
				thread.await(Duration.ofSeconds(5));
			}
			// one thread goes on locking now and then: the unused ones close as it
			// gives them back
			long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
			int open = mostOpenToOneNode(redlock);
			while (open > settings.poolMinIdle() + 1 && System.nanoTime() - end < 0) {
				redlock.acquire("trickle", TTL, Duration.ofSeconds(5)).release();
				LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
				open = mostOpenToOneNode(redlock);
			}
			System.out.printf("[connections] open to one node: %d at most during the burst, %d once unused%n", peak,
					open);
			assertThat(peak).isGreaterThan(settings.poolMinIdle() + 1);
			assertThat(open).isLessThanOrEqualTo(settings.poolMinIdle() + 1);
		}
	}

	/** The most connections open to any one node now. */
	private static int mostOpenToOneNode(Redlock redlock) {
		return Collections.max(redlock.footprint().connections());
	}

	@Test
	void timeASlowListenerTakesCountsInTheValidity(RedisNodes nodes) {
		Duration ttl = Duration.ofMillis(500);
		RedlockListener slow = new RedlockListener() {
			@Override
			public void nodeRequestFinished(NodeRequestEvent event) {
				if (event.command() == NodeCommand.ACQUIRE) {
					TestSupport.pauseFor(ttl);
				}
			}
		};
		try (Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS, slow)) {
			// the listener outlasts the TTL: the lease must not be handed out spent
			try {
				Lease lease = redlock.acquire("slow-listener", ttl, Duration.ZERO);
				assertThat(lease.isValid()).as("a lease handed out").isTrue();
				lease.release();
			}
			catch (LockNotAcquiredException ex) {
				assertThat(ex.reason()).isEqualTo(LockNotAcquiredException.Reason.VALIDITY_EXHAUSTED);
			}
		}
	}

}
