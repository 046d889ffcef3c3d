package dev.redlock.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.redlock.core.LockNotAcquiredException.Reason;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

@WithRedisNodes(count = 3)
class LeaseTests {

	private final RedlockSettings settings = TestSupport.SETTINGS.withRetryDelay(Duration.ofMillis(20));

	@Test
	void aMinimumHoldLeavesTheLockToExpireThenInsteadOfDeletingIt(RedisNodes nodes) {
		// a minimum hold of seconds: what is left of it when the nodes and the second
		// attempt are looked at is still far more than a busy machine's delays
		Duration minHold = Duration.ofSeconds(1);
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			Lease lease = redlock.acquire("held-at-least", Duration.ofSeconds(10), Duration.ZERO);
			assertThat(lease.release(minHold)).isEqualTo(ReleaseOutcome.RELEASED);
			assertThat(lease.isReleased()).isTrue();
			// the release returns on a quorum: a quorum keeps the lock for what is
			// left of the minimum hold; the other node too once its late command
			// lands, unless the acquisition never reached it
			assertThat(pttls(nodes, "redlock:held-at-least"))
				.filteredOn((pttl) -> pttl > 0 && pttl <= minHold.toMillis())
				.hasSizeGreaterThanOrEqualTo(redlock.quorum());
			TestSupport.awaitTrue("every node keeps the lock at most for the minimum hold", Duration.ofSeconds(5),
					() -> pttls(nodes, "redlock:held-at-least").stream()
						.allMatch((pttl) -> pttl == -2 || (pttl > 0 && pttl <= minHold.toMillis())));
			assertThat(redlock.tryAcquire("held-at-least", Duration.ofSeconds(10))).isEmpty();
			TestSupport.awaitTrue("the lock runs out at the end of the minimum hold", Duration.ofSeconds(10),
					() -> redlock.tryAcquire("held-at-least", Duration.ofSeconds(10)).map(Lease::release).isPresent());
			// held longer than the minimum already: deleted at once
			Lease later = redlock.acquire("held-long-enough", Duration.ofSeconds(10), Duration.ZERO);
			assertThat(later.release(Duration.ofNanos(1))).isEqualTo(ReleaseOutcome.RELEASED);
			TestSupport.awaitNoKeys(nodes);
		}
	}

	@Test
	void closeReleasesOnceOnEveryNode(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			// every node's connections open first, so that every node gets the SET, not
			// only the quorum the round waits for
			TestSupport.awaitWarmPools(redlock);
			Lease lease = redlock.acquire("once", Duration.ofSeconds(10), Duration.ZERO);
			assertThat(lease.resource()).isEqualTo("once");
			assertThat(lease.redisKey()).isEqualTo("redlock:once");
			// the round returns on a quorum; the last node's SET lands a moment later
			awaitOnEveryNode(nodes, "redlock:once");
			lease.close();
			assertThat(lease.isReleased()).isTrue();
			assertThat(lease.isValid()).isFalse();
			TestSupport.awaitNoKeys(nodes);
			// a second holder takes the lock; closing the first lease again must not
			// touch it
			Lease next = redlock.acquire("once", Duration.ofSeconds(10), Duration.ZERO);
			awaitOnEveryNode(nodes, "redlock:once");
			lease.close();
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
			assertThat(TestSupport.nodesWithKey(nodes, "redlock:once")).isEqualTo(3);
			assertThat(next.release()).isEqualTo(ReleaseOutcome.RELEASED);
		}
	}

	@Test
	void heldLockIsRefusedAsContendedNamingTheNodes(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings);
				Redlock other = TestSupport.redlock(nodes, this.settings)) {
			try (Lease held = redlock.acquire("busy", Duration.ofSeconds(10), Duration.ZERO)) {
				assertThat(other.tryAcquire("busy", Duration.ofSeconds(10))).isEmpty();
				// long enough for a second attempt even when the subscription to the
				// release notices is slow to be confirmed: the waiter then tries again
				// after a node timeout
				Duration wait = Duration.ofMillis(1500);
				assertThatExceptionOfType(LockNotAcquiredException.class)
					.isThrownBy(() -> other.acquire("busy", Duration.ofSeconds(10), wait))
					.satisfies((ex) -> {
						assertThat(ex.reason()).isEqualTo(Reason.CONTENDED);
						assertThat(ex.resource()).isEqualTo("busy");
						// settled once a quorum refused: the last node's answer may
						// come after
						assertThat(ex.heldElsewhere()).hasSizeGreaterThanOrEqualTo(other.quorum())
							.doesNotHaveDuplicates()
							.isSubsetOf(nodes.uris());
						assertThat(ex.failedNodes()).isEmpty();
						assertThat(ex.attempts()).isGreaterThan(1);
						assertThat(ex.waited()).isGreaterThanOrEqualTo(wait);
						assertThat(ex.getMessage()).contains("held by another owner");
					});
				assertThat(held.isValid()).isTrue();
			}
		}
	}

	@Test
	void waitingAcquirerGetsTheLockOnceReleased(RedisNodes nodes) throws Exception {
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			Lease first = redlock.acquire("handover", Duration.ofSeconds(10), Duration.ZERO);
			CompletableFuture<Lease> second = CompletableFuture
				.supplyAsync(() -> redlock.acquire("handover", Duration.ofSeconds(10), Duration.ofSeconds(10)));
			first.release();
			Lease lease = second.get(15, TimeUnit.SECONDS);
			assertThat(lease.isValid()).isTrue();
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
		}
	}

	@Test
	void expiredHolderCannotReleaseOrExtendTheNextHoldersLock(RedisNodes nodes) {
		// the first holder's clock stands still, so it believes its lease is valid long
		// after the keys expired
		try (Redlock frozen = TestSupport.redlock(nodes, this.settings, () -> 0L);
				Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			Lease stale = frozen.acquire("expiry", Duration.ofMillis(300), Duration.ZERO);
			TestSupport.awaitTrue("the first lease's keys expired", Duration.ofSeconds(5),
					() -> TestSupport.keysOnNodes(nodes) == 0);
			// every node's connections open, so that every node gets the new holder's SET
			TestSupport.awaitWarmPools(redlock);
			Lease current = redlock.acquire("expiry", Duration.ofSeconds(30), Duration.ZERO);
			// the acquisition returns on a quorum; the last node's SET may land a little
			// later
			TestSupport.awaitTrue("the new holder's value is on every node", Duration.ofSeconds(5),
					() -> nodes.nodes().stream().allMatch((node) -> node.command("GET", "redlock:expiry") != null));
			String value = nodes.node(0).command("GET", "redlock:expiry");

			assertThat(stale.extend(Duration.ofMinutes(10))).isFalse();
			assertThat(stale.release()).isEqualTo(ReleaseOutcome.EXPIRED);

			for (RedisNode node : nodes.nodes()) {
				assertThat(node.command("GET", "redlock:expiry")).isEqualTo(value);
				assertThat(Long.parseLong(node.command("PTTL", "redlock:expiry"))).isBetween(1L, 30_000L);
			}
			assertThat(current.release()).isEqualTo(ReleaseOutcome.RELEASED);
		}
	}

	@Test
	void extendSetsNewTtlOnTheNodes(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			Lease lease = redlock.acquire("extend", Duration.ofSeconds(2), Duration.ZERO);
			assertThat(lease.extend(Duration.ofSeconds(60))).isTrue();
			assertThat(lease.extensionAttempts()).isEqualTo(1);
			assertThat(lease.remainingValidity()).isGreaterThan(Duration.ofSeconds(50));
			// the extension returns once a quorum confirmed it; a node whose SET the
			// acquisition did not wait for may take it later, or not at all
			assertThat(nodes.nodes()
				.stream()
				.filter((node) -> Long.parseLong(node.command("PTTL", "redlock:extend")) > 50_000L)
				.count()).as("nodes with the new TTL").isGreaterThanOrEqualTo(redlock.quorum());
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
			assertThatIllegalStateException().isThrownBy(lease::extend).withMessageContaining("released");
		}
	}

	@Test
	void extensionsAreBounded(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings.toBuilder().maxExtensions(2).build())) {
			try (Lease lease = redlock.acquire("bounded", Duration.ofSeconds(10), Duration.ZERO)) {
				assertThat(lease.extend()).isTrue();
				assertThat(lease.extend()).isTrue();
				assertThatIllegalStateException().isThrownBy(lease::extend).withMessageContaining("maxExtensions");
			}
		}
	}

	@Test
	void scriptsAreReloadedAfterScriptFlush(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			Lease lease = redlock.acquire("noscript", Duration.ofSeconds(10), Duration.ZERO);
			flushScripts(nodes);
			assertThat(lease.extend(Duration.ofSeconds(20))).isTrue();
			flushScripts(nodes);
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
			TestSupport.awaitNoKeys(nodes);
		}
	}

	@Test
	void expiredLeaseIsReportedAfterScriptFlushToo(RedisNodes nodes) {
		try (Redlock frozen = TestSupport.redlock(nodes, this.settings, () -> 0L)) {
			Lease lease = frozen.acquire("noscript-expired", Duration.ofMillis(200), Duration.ZERO);
			TestSupport.awaitTrue("the keys expired", Duration.ofSeconds(5), () -> TestSupport.keysOnNodes(nodes) == 0);
			flushScripts(nodes);
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.EXPIRED);
		}
	}

	@Test
	void releaseWithMostNodesDownIsUnknown(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			Lease lease = redlock.acquire("unknown", Duration.ofSeconds(10), Duration.ZERO);
			nodes.node(0).kill();
			nodes.node(1).kill();
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.UNKNOWN);
		}
	}

	@Test
	void interruptedCallerStopsWaitingAndKeepsItsInterrupt(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			try (Lease held = redlock.acquire("interrupt", Duration.ofSeconds(10), Duration.ZERO)) {
				Thread.currentThread().interrupt();
				try {
					assertThatExceptionOfType(LockNotAcquiredException.class)
						.isThrownBy(() -> redlock.acquire("interrupt", Duration.ofSeconds(10), Duration.ofSeconds(30)))
						.satisfies((ex) -> assertThat(ex.reason()).isEqualTo(Reason.INTERRUPTED));
					assertThat(Thread.currentThread().isInterrupted()).isTrue();
				}
				finally {
					Thread.interrupted();
				}
			}
		}
	}

	@Test
	void badArgumentsAreRefusedBeforeAnyNetworkCall(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			assertThatIllegalArgumentException()
				.isThrownBy(() -> redlock.acquire("", Duration.ofSeconds(1), Duration.ZERO))
				.withMessageContaining("resource");
			assertThatIllegalArgumentException().isThrownBy(() -> redlock.acquire("x", Duration.ZERO, Duration.ZERO))
				.withMessageContaining("TTL");
			assertThatIllegalArgumentException()
				.isThrownBy(() -> redlock.acquire("x", Duration.ofSeconds(1), Duration.ofSeconds(-1)))
				.withMessageContaining("wait time");
		}
		TestSupport.awaitNoKeys(nodes);
	}

	/** Waits until the key is on every node. */
	private static void awaitOnEveryNode(RedisNodes nodes, String key) {
		TestSupport.awaitTrue(key + " is on every node", Duration.ofSeconds(5),
				() -> TestSupport.nodesWithKey(nodes, key) == nodes.size());
	}

	/** The key's PTTL on every node, in milliseconds: -2 where it does not exist. */
	private static List<Long> pttls(RedisNodes nodes, String key) {
		return nodes.nodes().stream().map((node) -> Long.parseLong(node.command("PTTL", key))).toList();
	}

	private static void flushScripts(RedisNodes nodes) {
		for (RedisNode node : nodes.nodes()) {
			node.command("SCRIPT", "FLUSH");
		}
	}

}
