package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A caller's interrupt neither keeps its extension or release from the nodes nor costs
 * anyone a connection, on platform and virtual threads alike: on a virtual thread, a
 * socket read with the interrupt flag set closes the socket, so rounds read with the flag
 * cleared and set it again after.
 */
@WithRedisNodes(count = 5)
class InterruptedCallerTests {

	private static final Duration TTL = Duration.ofSeconds(10);

	@ParameterizedTest(name = "virtual thread: {0}")
	@MethodSource("dev.redlock.core.TestThreads#kinds")
	void anInterruptedThreadStillExtendsAndReleases(boolean virtual, RedisNodes nodes) throws Exception {
		// a few milliseconds to every node, so that each read waits for its reply (that
		// is when an interrupted virtual thread's socket would be closed)
		List<LatencyProxy> proxies = new ArrayList<>();
		for (RedisNode node : nodes.nodes()) {
			proxies.add(LatencyProxy.to(node, Duration.ofMillis(3)));
		}
		List<String> uris = proxies.stream().map(LatencyProxy::uri).toList();
		// a node timeout far above the proxies' few milliseconds and what a busy
		// machine adds to them
		RedlockSettings settings = TestSupport.SETTINGS.withNodeTimeout(Duration.ofSeconds(2));
		try (Redlock redlock = Redlock.builder().nodes(uris).settings(settings).build()) {
			redlock.acquire("warm-up", TTL, Duration.ZERO).release();
			TestSupport.awaitWarmPools(redlock);
			int[] idleBefore = idleConnections(redlock, nodes.size());
			Outcome outcome = TestThreads.start(virtual, () -> {
				Lease lease = redlock.acquire("interrupted", TTL, Duration.ZERO);
				Thread.currentThread().interrupt();
				boolean extended = lease.extend();
				ReleaseOutcome released = lease.release();
				return new Outcome(extended, released, Thread.currentThread().isInterrupted(), lease.isLost());
			}).await(Duration.ofSeconds(10));
			assertThat(outcome).isEqualTo(new Outcome(true, ReleaseOutcome.RELEASED, true, false));
			TestSupport.awaitNoKeys(nodes);
			int[] idleAfter = idleConnections(redlock, nodes.size());
			// none closed (an interrupted virtual thread's read would close its socket);
			// one
			// more may have been opened for a release that found the others busy
			for (int i = 0; i < idleBefore.length; i++) {
				assertThat(idleAfter[i]).as("idle connections kept on node %d", i)
					.isGreaterThanOrEqualTo(idleBefore[i]);
			}
		}
		finally {
			proxies.forEach(LatencyProxy::close);
		}
	}

	/**
	 * The interrupt arrives while the release waits for a slow node's reply: that one
	 * connection is lost (a virtual thread's socket is closed), but the release counts
	 * the other nodes, the slow node's other connections are kept, and the interrupt flag
	 * is set when the release returns. The other four nodes answer 50 ms late each way
	 * and the slow node was measured without delay before it turned slow, so the release
	 * reads it first, or right after the others settled it: on a busy machine, a node
	 * measured at a few milliseconds through its proxy was not always read in the round,
	 * and the release returned before the interrupt.
	 */
	@Test
	@EnabledForJreRange(min = JRE.JAVA_21)
	void anInterruptDuringAReleaseCostsOnlyTheConnectionBeingRead(RedisNodes nodes) throws Exception {
		List<LatencyProxy> proxies = new ArrayList<>();
		for (RedisNode node : nodes.nodes()) {
			proxies.add(LatencyProxy.to(node, Duration.ofMillis(50)));
		}
		LatencyProxy slow = proxies.get(4);
		slow.delay(Duration.ZERO);
		List<String> uris = proxies.stream().map(LatencyProxy::uri).toList();
		// the slow node's reply takes 1.2 s: long enough for the test to see the release
		// wait for it on a busy machine, well within the node timeout
		Duration oneWay = Duration.ofMillis(600);
		RedlockSettings settings = TestSupport.SETTINGS.withNodeTimeout(Duration.ofSeconds(2));
		try (Redlock redlock = Redlock.builder().nodes(uris).settings(settings).build()) {
			// rounds from two threads at once until the node has two connections: one to
			// lose, one that must stay
			CountDownLatch go = new CountDownLatch(1);
			List<TestThreads.Running<Integer>> warmUps = List.of(1, 2)
				.stream()
				.map((i) -> TestThreads.start(false, () -> {
					go.await();
					int rounds = 0;
					while (redlock.internals().idleConnections(4) < 2 && rounds < 10_000) {
						redlock.acquire("warm-up-" + i, TTL, Duration.ZERO).release();
						rounds++;
					}
					return rounds;
				}))
				.toList();
			go.countDown();
			for (TestThreads.Running<Integer> warmUp : warmUps) {
				warmUp.await(Duration.ofSeconds(30));
			}
			assertThat(redlock.internals().idleConnections(4)).isGreaterThanOrEqualTo(2);
			Lease victim = redlock.acquire("victim", TTL, Duration.ZERO);
			slow.delay(oneWay);
			TestThreads.Running<Outcome> releasing = TestThreads.start(true, () -> {
				ReleaseOutcome released = victim.release();
				return new Outcome(true, released, Thread.currentThread().isInterrupted(), victim.isLost());
			});
			TestSupport.awaitTrue("the release waits for the slow node", Duration.ofSeconds(5),
					() -> releasing.thread().getState() == Thread.State.WAITING
							|| releasing.thread().getState() == Thread.State.TIMED_WAITING);
			int slowIdle = redlock.internals().idleConnections(4);
			releasing.thread().interrupt();
			Outcome outcome = releasing.await(Duration.ofSeconds(10));
			assertThat(outcome).isEqualTo(new Outcome(true, ReleaseOutcome.RELEASED, true, false));
			assertThat(redlock.internals().idleConnections(4)).as("the slow node's other connections")
				.isGreaterThanOrEqualTo(slowIdle);
			TestSupport.awaitTrue("the release reached every node", Duration.ofSeconds(5),
					() -> TestSupport.keysOnNodes(nodes) == 0);
		}
		finally {
			proxies.forEach(LatencyProxy::close);
		}
	}

	private static int[] idleConnections(Redlock redlock, int nodes) {
		int[] idle = new int[nodes];
		for (int i = 0; i < nodes; i++) {
			idle[i] = redlock.internals().idleConnections(i);
		}
		return idle;
	}

	private record Outcome(boolean extended, ReleaseOutcome released, boolean stillInterrupted, boolean lost) {
	}

}
