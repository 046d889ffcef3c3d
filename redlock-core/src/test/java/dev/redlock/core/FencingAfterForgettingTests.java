package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fencing counters have no TTL, so a quarantine does not cover them: a node that forgot
 * them must not make a token go backwards, and nodes that never held any (new ones) must
 * not keep fenced locks from being taken.
 */
@WithRedisNodes(count = 5)
class FencingAfterForgettingTests {

	private static final Duration QUARANTINE = Duration.ofSeconds(2);

	private static final RedlockSettings SETTINGS = TestSupport.withQuarantine(QUARANTINE);

	@Test
	void freshNodesTakeFencedLocksOnceTheirCountersAreSeeded(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, SETTINGS)) {
			ForgetfulNodes.awaitCounting(redlock);
			Lease lease = redlock.acquire(LockRequest.of("fresh-fenced", QUARANTINE).fenced(), Duration.ofSeconds(10));
			assertThat(lease.fencingToken()).isPresent();
			lease.release();
		}
	}

	@Test
	void aNodeThatForgotItsCountersNeverMakesATokenGoBack(RedisNodes nodes) {
		List<LatencyProxy> proxies = new ArrayList<>();
		try (ForgetfulNodes scenario = new ForgetfulNodes(nodes, nodes.uris(), SETTINGS)) {
			ForgetfulNodes.awaitCounting(scenario.holder());
			// A's tokens come from nodes 0, 1 and 2: their counters rise, 3 and 4 never
			// see them
			long highest = 0;
			Lease first = scenario.acquiredOnNodes012("ledger", true);
			highest = first.fencingToken().orElseThrow();
			first.release();
			for (int i = 0; i < 10; i++) {
				Lease lease = scenario.holder()
					.acquire(LockRequest.of("ledger", QUARANTINE).fenced(), Duration.ofSeconds(10));
				highest = Math.max(highest, lease.fencingToken().orElseThrow());
				lease.release();
			}
			nodes.node(2).command("FLUSHALL");

			// B reaches only nodes 2, 3 and 4: a quorum, but one where only the node that
			// forgot ever held the counter
			List<String> uris = new ArrayList<>(nodes.uris());
			for (int i = 0; i <= 1; i++) {
				LatencyProxy proxy = LatencyProxy.to(nodes.node(i), Duration.ZERO);
				proxies.add(proxy);
				uris.set(i, proxy.uri());
			}
			try (Redlock b = Redlock.builder().nodes(uris).settings(SETTINGS).build()) {
				ForgetfulNodes.awaitCounting(b);
				proxies.forEach(LatencyProxy::close);
				// node 2 is out of quarantine by now: only its counter's generation tells
				long end = System.nanoTime() + Duration.ofSeconds(3).toNanos();
				while (System.nanoTime() - end < 0) {
					try (Lease lease = b.acquire(LockRequest.of("ledger", QUARANTINE).fenced(), Duration.ZERO)) {
						assertThat(lease.fencingToken().orElseThrow()).as("a token after %d", highest)
							.isGreaterThan(highest);
					}
					catch (LockNotAcquiredException ex) {
						// no quorum of counters that can be trusted: refused, never a
						// lower token
					}
				}
			}
		}
		finally {
			proxies.forEach(LatencyProxy::close);
		}
	}

}
