package dev.redlock.core;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * A node that restarted without persistence forgets the locks it held. The restart
 * quarantine keeps it from counting towards a quorum until the longest TTL has passed
 * since its start, so that it cannot help a second holder in: proved by the same scenario
 * with the quarantine off, where it does.
 */
@WithRedisNodes(count = 3)
class RestartQuarantineTests {

	private static final Duration QUARANTINE = Duration.ofSeconds(2);

	private static final Duration TTL = QUARANTINE;

	private static final RedlockSettings SETTINGS = RedlockSettings.defaults()
		.withDefaultTtl(TTL)
		.withRestartQuarantine(QUARANTINE);

	private static final String RESOURCE = "restart";

	@Test
	void aRestartedNodeDoesNotHelpASecondHolderIn(RedisNodes nodes) {
		try (Redlock a = TestSupport.redlock(nodes, SETTINGS); Redlock b = TestSupport.redlock(nodes, SETTINGS)) {
			Lease first = acquiredBeforeARestart(nodes, a, b);

			// nodes 0 and 1 are free again, node 2 still holds A's lock: only the
			// quarantine stands in B's way
			int attempts = 0;
			while (first.isValid()) {
				Optional<Lease> second = b.tryAcquire(RESOURCE, TTL);
				boolean stillValid = first.isValid();
				second.ifPresent(Lease::release);
				assertThat(second.isPresent() && stillValid).as("a second holder while the first is valid").isFalse();
				attempts++;
			}
			assertThat(attempts).isPositive();
			assertThat(TestSupport.keysOn(nodes.node(0))).as("B's attempts leave nothing behind").isZero();

			// the quarantine ends after A's lock expired everywhere: B gets it then
			long deadline = System.nanoTime() + QUARANTINE.plusSeconds(3).toNanos();
			Optional<Lease> second = Optional.empty();
			while (second.isEmpty() && System.nanoTime() - deadline < 0) {
				second = b.tryAcquire(RESOURCE, TTL);
			}
			assertThat(second).as("acquired once the quarantine is over").isPresent();
			assertThat(first.isValid()).isFalse();
			second.get().release();
		}
	}

	@Test
	void withoutQuarantineTheRestartedNodesGiveASecondHolder(RedisNodes nodes) {
		RedlockSettings off = SETTINGS.withRestartQuarantine(Duration.ZERO);
		try (Redlock a = TestSupport.redlock(nodes, off); Redlock b = TestSupport.redlock(nodes, off)) {
			Lease first = a.acquire(RESOURCE, TTL, Duration.ZERO);
			restartForgetting(nodes, 0, 1);

			Lease second = b.acquire(RESOURCE, TTL, Duration.ofSeconds(1));

			assertThat(first.isValid()).as("the first holder is still within its validity").isTrue();
			assertThat(second.isValid()).as("and so is the second: mutual exclusion is lost").isTrue();
			second.release();
		}
	}

	@Test
	void aQuarantinedNodeIsNamedInTheFailureAndInItsStatus(RedisNodes nodes) {
		try (Redlock a = TestSupport.redlock(nodes, SETTINGS); Redlock b = TestSupport.redlock(nodes, SETTINGS)) {
			Lease first = acquiredBeforeARestart(nodes, a, b);
			// b's connections to the restarted nodes died with them: its next ones read
			// the new run_ids
			TestSupport.awaitTrue("b sees the restarted nodes", Duration.ofSeconds(5), () -> {
				List<NodeStatus> seen = b.checkNodes();
				return !seen.get(0).quarantineRemaining().isZero() && !seen.get(1).quarantineRemaining().isZero();
			});

			assertThatExceptionOfType(LockNotAcquiredException.class)
				.isThrownBy(() -> b.acquire(RESOURCE, TTL, Duration.ZERO))
				.satisfies((ex) -> assertThat(ex.reason()).isEqualTo(LockNotAcquiredException.Reason.NO_QUORUM))
				.satisfies((ex) -> assertThat(ex.heldElsewhere()).containsExactly(nodes.node(2).uri()))
				.satisfies((ex) -> assertThat(ex.failedNodes()).hasSize(2)
					.allSatisfy((failed) -> assertThat(failed).contains("in quarantine", "restart")));

			List<NodeStatus> statuses = b.checkNodes();
			assertThat(statuses.get(0).quarantineRemaining()).isPositive().isLessThanOrEqualTo(QUARANTINE);
			assertThat(statuses.get(1).quarantineRemaining()).isPositive().isLessThanOrEqualTo(QUARANTINE);
			assertThat(statuses.get(2).quarantineRemaining()).isZero();
			assertThat(statuses).extracting(NodeStatus::counts).containsExactly(false, false, true);
			first.release();
		}
	}

	@Test
	void aNodeRestartedWhileConnectionsWereIdleIsQuarantinedByItsUptime(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, SETTINGS)) {
			awaitOutOfQuarantine(nodes, redlock);
			redlock.acquire(RESOURCE, TTL, Duration.ZERO).release();
			nodes.node(2).restart();

			// the idle connection to node 2 is dead; the next one reads the new uptime
			TestSupport.awaitTrue("node 2 is seen quarantined", Duration.ofSeconds(5),
					() -> !redlock.checkNodes().get(2).quarantineRemaining().isZero());
			// two nodes are enough for a quorum of three
			try (Lease lease = redlock.acquire(RESOURCE, TTL, Duration.ZERO)) {
				assertThat(lease.isValid()).isTrue();
			}
		}
	}

	@Test
	void ttlsLongerThanTheQuarantineAreRefused(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, SETTINGS)) {
			assertThatIllegalArgumentException()
				.isThrownBy(() -> redlock.acquire(RESOURCE, QUARANTINE.plusMillis(1), Duration.ZERO))
				.withMessageContaining("restart quarantine")
				.withMessageContaining("appendfsync always");
			assertThatIllegalArgumentException().isThrownBy(() -> redlock.tryAcquire(RESOURCE, Duration.ofMinutes(1)));
			awaitOutOfQuarantine(nodes, redlock);
			try (Lease lease = redlock.acquire(RESOURCE, TTL, Duration.ZERO)) {
				assertThatIllegalArgumentException().isThrownBy(() -> lease.extend(QUARANTINE.plusSeconds(1)))
					.withMessageContaining("restart quarantine");
			}
		}
	}

	@Test
	void zeroQuarantineAcceptsAnyTtl(RedisNodes nodes) {
		RedlockSettings off = RedlockSettings.defaults().withRestartQuarantine(Duration.ZERO);
		try (Redlock redlock = TestSupport.redlock(nodes, off);
				Lease lease = redlock.acquire(RESOURCE, Duration.ofHours(2), Duration.ZERO)) {
			assertThat(redlock.checkNodes()).allSatisfy((status) -> assertThat(status.counts()).isTrue());
			assertThat(lease.isValid()).isTrue();
		}
	}

	/** The kit's nodes may have been started moments ago. */
	/**
	 * The nodes may have been (re)started by an earlier test: waits until every client
	 * has seen them counting.
	 */
	/**
	 * Once both instances count every node, A acquires the lock; then nodes 0 and 1
	 * restart without it.
	 */
	private static Lease acquiredBeforeARestart(RedisNodes nodes, Redlock a, Redlock b) {
		awaitOutOfQuarantine(nodes, a, b);
		Lease first = a.acquire(RESOURCE, TTL, Duration.ZERO);
		restartForgetting(nodes, 0, 1);
		return first;
	}

	private static void awaitOutOfQuarantine(RedisNodes nodes, Redlock... clients) {
		for (Redlock client : clients) {
			TestSupport.awaitTrue("every node is out of its restart quarantine", QUARANTINE.plusSeconds(5),
					() -> client.checkNodes().stream().allMatch(NodeStatus::counts));
		}
	}

	/** Kill -9 and start again without persistence: the node forgets every key. */
	private static void restartForgetting(RedisNodes nodes, int... indexes) {
		for (int index : indexes) {
			nodes.node(index).restart();
			assertThat(nodes.node(index).command("DBSIZE")).isEqualTo("0");
		}
	}

}
