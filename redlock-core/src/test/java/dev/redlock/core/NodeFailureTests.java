package dev.redlock.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.redlock.core.LockNotAcquiredException.Reason;
import dev.redlock.core.internal.transport.WarmUp;
import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Redlock keeps working while a minority of nodes is down and fails fast, within its
 * bound, when a majority is.
 */
@WithRedisNodes(count = 5)
class NodeFailureTests {

	/**
	 * Long enough for a healthy node's reply that waited for a CPU on a busy machine:
	 * with three of five nodes left, every one of them must answer in time. The bounds
	 * below are in node timeouts, and a hang would cost far more.
	 */
	private static final Duration NODE_TIMEOUT = Duration.ofSeconds(1);

	private static final Duration RETRY_DELAY = Duration.ofMillis(100);

	private static final Duration WAIT = Duration.ofSeconds(1);

	private final RedlockSettings settings = TestSupport.SETTINGS.withNodeTimeout(NODE_TIMEOUT)
		.withRetryDelay(RETRY_DELAY);

	@Test
	void minorityKilledStillLocks(RedisNodes nodes) {
		nodes.nodes(1, 3).forEach(RedisNode::kill);
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			for (int i = 0; i < 20; i++) {
				try (Lease lease = redlock.acquire("minority", Duration.ofSeconds(10), Duration.ZERO)) {
					assertThat(lease.isValid()).isTrue();
					assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
				}
			}
		}
	}

	@Test
	void minorityPausedStillLocksWithinTheNodeTimeout(RedisNodes nodes) {
		nodes.nodes(0, 4).forEach(RedisNode::pause);
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			try (Lease lease = redlock.acquire("paused", Duration.ofSeconds(10), Duration.ZERO)) {
				assertThat(lease.isValid()).isTrue();
				// the paused nodes cost nothing: the round ends once the three others
				// have granted, without waiting for the frozen nodes' connections until
				// the node timeout (opening the three others' is all it waits for); half
				// a node timeout is room for a busy machine
				Duration ttlLessDrift = Duration.ofSeconds(10).minus(Duration.ofMillis(102));
				assertThat(lease.remainingValidity()).isGreaterThan(ttlLessDrift.minus(NODE_TIMEOUT.dividedBy(2)));
			}
		}
	}

	/**
	 * Two of five nodes answer half a second late in each direction. Once a round has
	 * found them lagging, later rounds stop waiting for them as soon as the three others
	 * have decided, won or lost, so neither the lock nor the refusal waits; their replies
	 * are read later, off the caller's thread, and the release sent right behind a lost
	 * {@code SET} leaves nothing behind.
	 */
	@Test
	void aSlowMinorityDelaysNeitherALockWonNorALockLost(RedisNodes nodes) throws Exception {
		// a round, a refusal or a release that waited for a slow node took its round
		// trip at least: the bounds below are that round trip, a second, far above what
		// a busy machine adds to one that did not wait
		Duration oneWay = Duration.ofMillis(500);
		Duration roundTrip = oneWay.multipliedBy(2);
		Duration ttl = Duration.ofSeconds(10);
		RedlockSettings patient = this.settings.withNodeTimeout(Duration.ofSeconds(3));
		try (LatencyProxy slow3 = LatencyProxy.to(nodes.node(3), Duration.ZERO);
				LatencyProxy slow4 = LatencyProxy.to(nodes.node(4), Duration.ZERO)) {
			List<String> uris = List.of(nodes.node(0).uri(), nodes.node(1).uri(), nodes.node(2).uri(), slow3.uri(),
					slow4.uri());
			try (Redlock holder = Redlock.builder().nodes(uris).settings(patient).build();
					Redlock other = Redlock.builder().nodes(uris).settings(patient).build()) {
				// every connection is opened while the proxies are fast, the warm ones
				// included: one opened through a slow proxy takes seconds, and a slow
				// node
				// without an idle connection is left out of a round (not written to), so
				// its late reply, counted below, would never come
				holder.acquire("slow-minority", ttl, Duration.ZERO).release();
				other.acquire("slow-minority", ttl, Duration.ZERO).release();
				TestSupport.awaitWarmPools(holder);
				TestSupport.awaitWarmPools(other);
				slow3.delay(oneWay);
				slow4.delay(oneWay);
				// each instance's first round after the slowdown waits for the slow
				// nodes, and learns they lag; the
				// releases leave the slow nodes to their late-reply threads, which give
				// the connections back
				holder.acquire("learn", ttl, Duration.ZERO).release();
				other.acquire("learn", ttl, Duration.ZERO).release();
				TestSupport.awaitTrue("the slow nodes' connections are idle again", Duration.ofSeconds(10),
						() -> holder.internals().idleConnections(3) > 0 && holder.internals().idleConnections(4) > 0
								&& other.internals().idleConnections(3) > 0
								&& other.internals().idleConnections(4) > 0);

				long start = System.nanoTime();
				Lease lease = holder.acquire("slow-minority", ttl, Duration.ZERO);
				assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(roundTrip);
				assertThat(lease.remainingValidity()).isGreaterThan(ttl.minus(patient.driftFor(ttl)).minus(roundTrip));

				// the holder's SET reaches the slow nodes before the other's (it was
				// written first, but a busy proxy thread can swap two connections'
				// bytes), so they answer the other's with "taken"
				TestSupport.awaitTrue("the holder's value on the slow nodes", Duration.ofSeconds(10),
						() -> nodes.nodes(3, 4)
							.stream()
							.allMatch((node) -> node.command("GET", TestSupport.PREFIX + "slow-minority") != null));
				long refusedAt = System.nanoTime();
				String expectedBefore = "expected latencies (ms) before: " + other.internals().expectedLatencies()
						+ ", idle connections: " + idle(other);
				assertThatExceptionOfType(LockNotAcquiredException.class)
					.isThrownBy(() -> other.acquire("slow-minority", ttl, Duration.ZERO))
					.satisfies((ex) -> assertThat(ex.reason()).isEqualTo(Reason.CONTENDED));
				assertThat(Duration.ofNanos(System.nanoTime() - refusedAt))
					.as(expectedBefore + "; after: " + other.internals().expectedLatencies() + "; node statistics: "
							+ other.nodeStatistics())
					.isLessThan(roundTrip);

				// the late "taken" from a slow node still reaches the statistics, from
				// the late-reply thread
				TestSupport.awaitTrue("the slow nodes' late replies are counted", Duration.ofSeconds(5),
						() -> other.nodeStatistics().get(3).rejected() >= 1
								&& other.nodeStatistics().get(4).rejected() >= 1);
				// the release does not wait for the slow nodes either: their late-reply
				// threads read what they say
				long releasedAt = System.nanoTime();
				assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
				assertThat(Duration.ofNanos(System.nanoTime() - releasedAt)).isLessThan(roundTrip);
			}
			TestSupport.awaitTrue("nothing is left on any node", Duration.ofSeconds(5),
					() -> TestSupport.keysOnNodes(nodes) == 0);
		}
	}

	private static List<Integer> idle(Redlock redlock) {
		return java.util.stream.IntStream.range(0, 5).mapToObj(redlock.internals()::idleConnections).toList();
	}

	@Test
	void frozenNodesFirstInLineDoNotStarveTheOthersOfTheirTime(RedisNodes nodes) {
		nodes.nodes(0, 1).forEach(RedisNode::pause);
		// fresh instances: every node needs a new connection, and the frozen ones come
		// first
		for (int i = 0; i < 3; i++) {
			try (Redlock redlock = TestSupport.redlock(nodes, this.settings);
					Lease lease = redlock.acquire("frozen-first", Duration.ofSeconds(10), Duration.ZERO)) {
				assertThat(lease.isValid()).isTrue();
			}
		}
	}

	/**
	 * A node timeout of 250 ms: a node whose connection attempt failed is tried again
	 * after four node timeouts, so the restarted node is back within a second. Every lock
	 * is retried for a while, so that a healthy node's reply that waited for a CPU on a
	 * busy machine costs a retry; a connection lost for good on a pool of one would fail
	 * every one of them.
	 */
	@Test
	void connectionsAreNotLostOverManyFailuresAndARestartedNodeRejoins(RedisNodes nodes) {
		RedlockSettings onePerNode = this.settings.withNodeTimeout(Duration.ofMillis(250)).withPool(1, 1);
		Duration wait = Duration.ofSeconds(2);
		try (Redlock redlock = TestSupport.redlock(nodes, onePerNode);
				Redlock other = TestSupport.redlock(nodes, onePerNode)) {
			nodes.node(0).kill();
			try (Lease held = other.acquire("pool", Duration.ofSeconds(10), wait)) {
				for (int i = 0; i < 30; i++) {
					assertThat(redlock.tryAcquire("pool", Duration.ofSeconds(10))).isEmpty();
				}
			}
			for (int i = 0; i < 30; i++) {
				redlock.acquire("pool", Duration.ofSeconds(10), wait).release();
			}
			nodes.node(0).restart();
			TestSupport.awaitTrue("the restarted node takes part again", Duration.ofSeconds(10), () -> {
				try (Lease lease = redlock.acquire("pool", Duration.ofSeconds(10), Duration.ZERO)) {
					return nodes.node(0).command("GET", "redlock:pool") != null;
				}
				catch (LockNotAcquiredException ex) {
					// an attempt that failed while the node came back: the next one
					// counts
					return false;
				}
			});
		}
	}

	@Test
	void majorityKilledFailsWithinTheBoundAndLeavesNothing(RedisNodes nodes) {
		nodes.nodes(0, 2, 4).forEach(RedisNode::kill);
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			long start = System.nanoTime();
			LockNotAcquiredException failure = assertThrows(LockNotAcquiredException.class,
					() -> redlock.acquire("majority", Duration.ofSeconds(10), WAIT));
			Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
			// no attempt starts after the wait time; the last one costs at most a node
			// timeout, its clean-up another
			Duration bound = WAIT.plus(NODE_TIMEOUT.multipliedBy(2)).plus(Duration.ofMillis(500));
			System.out.printf("majority down: %s after %d ms (%d attempts), bound %d ms%n", failure.reason(),
					elapsed.toMillis(), failure.attempts(), bound.toMillis());
			assertThat(failure.reason()).isEqualTo(Reason.NO_QUORUM);
			assertThat(elapsed).isGreaterThanOrEqualTo(WAIT).isLessThan(bound);
			// retried after the retry delay (at least half of it each time), not in a
			// loop: the clean-up of the live
			// nodes announces nothing that would wake the waiter
			long mostAttempts = 2 + WAIT.toNanos() / (this.settings.retryDelay().toNanos() / 2);
			assertThat(failure.attempts()).isGreaterThan(1).isLessThanOrEqualTo((int) mostAttempts);
			assertThat(failure.failedNodes()).hasSize(3).allSatisfy((node) -> assertThat(node).contains("unreachable"));
			assertThat(failure.heldElsewhere()).isEmpty();
			assertThat(failure.getMessage()).contains("majority", "quorum", nodes.node(0).uri());
		}
		TestSupport.awaitNoKeys(nodes);
	}

	@Test
	void majorityPausedTimesOutWithinTheNodeTimeout(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			redlock.acquire("before-the-freeze", Duration.ofSeconds(10), Duration.ZERO).release();
			nodes.nodes(1, 2, 3).forEach(RedisNode::pause);
			long start = System.nanoTime();
			assertThatExceptionOfType(LockNotAcquiredException.class)
				.isThrownBy(() -> redlock.acquire("majority-paused", Duration.ofSeconds(10), Duration.ZERO))
				.satisfies((ex) -> assertThat(ex.reason()).isEqualTo(Reason.NO_QUORUM))
				.satisfies((ex) -> assertThat(ex.failedNodes()).hasSize(3)
					.allSatisfy((node) -> assertThat(node).contains("timeout")));
			Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
			assertThat(elapsed).isLessThan(NODE_TIMEOUT.multipliedBy(2).plus(Duration.ofMillis(500)));
		}
		finally {
			nodes.nodes(1, 2, 3).forEach(RedisNode::resume);
		}
	}

	/**
	 * A {@code Redlock} built while a majority is frozen: its first call waits for the
	 * first connections (at most the warm-up's bound), then fails like any other.
	 */
	@Test
	void majorityFrozenAtStartupCostsTheFirstCallAtMostTheWarmUp(RedisNodes nodes) {
		nodes.nodes(1, 2, 3).forEach(RedisNode::pause);
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			long start = System.nanoTime();
			assertThatExceptionOfType(LockNotAcquiredException.class)
				.isThrownBy(() -> redlock.acquire("frozen-at-startup", Duration.ofSeconds(10), Duration.ZERO))
				.satisfies((ex) -> assertThat(ex.reason()).isEqualTo(Reason.NO_QUORUM))
				.satisfies((ex) -> assertThat(ex.failedNodes()).hasSize(3));
			Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
			Duration warmUp = Duration.ofMillis(WarmUp.CONNECT_TIMEOUT_MILLIS);
			assertThat(elapsed).isLessThan(warmUp.plus(NODE_TIMEOUT.multipliedBy(2)).plus(Duration.ofMillis(500)));
		}
		finally {
			nodes.nodes(1, 2, 3).forEach(RedisNode::resume);
		}
	}

}
