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

	/**
	 * Two nodes of the quorum that confirmed a token forget at once (two of five: a
	 * minority), and the third is out of reach: the nodes left are one that forgot too
	 * and two that never saw the token, and none of them may be what a node is re-seeded
	 * from. Re-seeded from those three, node 0 was marked {@code counters ok} without the
	 * token (seen on the code before this test), and nodes 0, 1 and 3 could have handed
	 * it out again. Once the third node is back, both are re-seeded above it.
	 */
	@Test
	void nodesThatForgotAreNeverReseededFromEachOther(RedisNodes nodes) {
		long token;
		try (ForgetfulNodes scenario = new ForgetfulNodes(nodes, nodes.uris(), SETTINGS)) {
			ForgetfulNodes.awaitCounting(scenario.holder());
			Lease lease = scenario.acquiredOnNodes012("ledger", true);
			token = lease.fencingToken().orElseThrow();
			lease.release();
		}
		nodes.node(0).command("FLUSHALL");
		nodes.node(1).command("FLUSHALL");
		LatencyProxy toNode2 = LatencyProxy.to(nodes.node(2), Duration.ZERO);
		List<String> uris = new ArrayList<>(nodes.uris());
		uris.set(2, toNode2.uri());
		toNode2.close();
		try (Redlock c = Redlock.builder().nodes(uris).settings(SETTINGS).build()) {
			TestSupport.awaitTrue("C tried to re-seed nodes 0 and 1", Duration.ofSeconds(10),
					() -> c.internals().group().reseed().attempts() >= 2);
			for (int node = 0; node <= 1; node++) {
				assertThat(ForgetfulNodes.trustedCounter(nodes.node(node), "ledger"))
					.as("node %d's counter, if trusted", node)
					.satisfiesAnyOf((count) -> assertThat(count).isEqualTo(ForgetfulNodes.UNTRUSTED),
							(count) -> assertThat(count).isGreaterThanOrEqualTo(token));
			}
		}
		try (Redlock d = TestSupport.redlock(nodes, SETTINGS)) {
			TestSupport.awaitTrue("D re-seeded nodes 0 and 1", Duration.ofSeconds(10),
					() -> ForgetfulNodes.trustedCounter(nodes.node(0), "ledger") != ForgetfulNodes.UNTRUSTED
							&& ForgetfulNodes.trustedCounter(nodes.node(1), "ledger") != ForgetfulNodes.UNTRUSTED);
			for (int node = 0; node <= 1; node++) {
				assertThat(ForgetfulNodes.trustedCounter(nodes.node(node), "ledger")).as("node %d's counter", node)
					.isGreaterThanOrEqualTo(token);
			}
		}
	}

}
