package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An attempt takes at most two node timeouts, whatever it meets, so that a call keeps its
 * documented bound of {@code waitTime + 2 × node timeout}: a fenced attempt on nodes that
 * lost their scripts (a round to send them again, a round to confirm its token, and
 * again), and an attempt that first removes this client's own values left on a majority
 * (a round each). Before, the first took four rounds and the second one round per value.
 */
@WithRedisNodes(count = 3)
class AttemptBoundTests {

	private static final Duration NODE_TIMEOUT = Duration.ofMillis(200);

	private static final RedlockSettings SETTINGS = TestSupport.SETTINGS.withNodeTimeout(NODE_TIMEOUT);

	/** What the machine may add to the bound. */
	private static final Duration SLACK = Duration.ofMillis(150);

	private static final Duration BOUND = NODE_TIMEOUT.multipliedBy(2).plus(SLACK);

	@Test
	void aFencedAttemptOnNodesThatLostTheirScriptsKeepsItsBound(RedisNodes nodes) {
		String resource = "flushed-scripts";
		List<LatencyProxy> proxies = new ArrayList<>();
		List<String> uris = new ArrayList<>();
		for (int i = 0; i < nodes.size(); i++) {
			// a round trip of 180 ms: four rounds in a row outlast two node timeouts
			LatencyProxy proxy = LatencyProxy.to(nodes.node(i), Duration.ofMillis(90));
			proxies.add(proxy);
			uris.add(proxy.uri());
		}
		try (Redlock redlock = Redlock.builder().nodes(uris).settings(SETTINGS).build()) {
			LockRequest fenced = LockRequest.of(resource, Duration.ofSeconds(10)).fenced();
			redlock.acquire(fenced, Duration.ofSeconds(5)).release();
			// every connection open before the scripts go: one greeted after the flush
			// would load them again, and the attempt would take two rounds, not four
			TestSupport.awaitWarmPools(redlock);
			// counters that differ, so that a token must be confirmed in a second round;
			// scripts gone, so that every round is sent twice
			nodes.node(0).command("SET", "{fence}" + TestSupport.PREFIX + resource, "40");
			nodes.nodes().forEach((node) -> node.command("SCRIPT", "FLUSH"));

			// the attempt alone: a release, when it got the lock, is a round of its own
			long start = System.nanoTime();
			Optional<Lease> lease = redlock.tryAcquire(fenced);
			Duration took = Duration.ofNanos(System.nanoTime() - start);
			lease.ifPresent(Lease::release);
			System.out.printf("[attempt bound] a fenced attempt on nodes without scripts: %d ms (bound %d ms)%n",
					took.toMillis(), BOUND.toMillis());
			assertThat(took).as("a fenced attempt on nodes without scripts").isLessThanOrEqualTo(BOUND);
			// the next attempts find the scripts again
			redlock.acquire(fenced, Duration.ofSeconds(5)).release();
		}
		finally {
			proxies.forEach(LatencyProxy::close);
		}
	}

	@Test
	void anAttemptThatFirstRemovesItsOwnLeftoversKeepsItsBound(RedisNodes nodes) {
		String resource = "leftovers";
		try (Redlock redlock = TestSupport.redlock(nodes, SETTINGS)) {
			redlock.acquire(resource, Duration.ofSeconds(10), Duration.ofSeconds(5)).release();
			// writes held on a majority: each attempt is lost, and its value waits for
			// the
			// late clean-up on the two paused nodes, enough to deny a quorum
			nodes.node(0).pauseClients(Duration.ofSeconds(30), true);
			nodes.node(1).pauseClients(Duration.ofSeconds(30), true);
			try {
				for (int i = 0; i < 5; i++) {
					assertThat(redlock.tryAcquire(resource, Duration.ofSeconds(10))).isEmpty();
				}
				long start = System.nanoTime();
				assertThat(redlock.tryAcquire(resource, Duration.ofSeconds(10))).isEmpty();
				Duration took = Duration.ofNanos(System.nanoTime() - start);
				assertThat(took).as("an attempt after five lost ones").isLessThanOrEqualTo(BOUND);
			}
			finally {
				nodes.node(0).unpauseClients();
				nodes.node(1).unpauseClients();
			}
		}
	}

}
