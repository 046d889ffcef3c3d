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

	/**
	 * The quarantine under test, and the shared test node timeout: on a busy machine a
	 * healthy node's reply can wait longer than the default 100 ms for a CPU.
	 */
	private static final RedlockSettings SETTINGS = RedlockSettings.defaults()
		.withDefaultTtl(TTL)
		.withRestartQuarantine(QUARANTINE)
		.withNodeTimeout(TestSupport.SETTINGS.nodeTimeout());

	private static final String RESOURCE = "restart";

	@Test
	void aRestartedNodeDoesNotHelpASecondHolderIn(RedisNodes nodes) {
		try (Redlock a = TestSupport.redlock(nodes, SETTINGS); Redlock b = TestSupport.redlock(nodes, SETTINGS)) {
			Lease first = acquiredBeforeARestart(nodes, a, b, TTL);

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
			// a lost attempt's clean-up reaches the last node a moment after the round
			TestSupport.awaitTrue("B's attempts leave nothing behind", Duration.ofSeconds(5),
					() -> TestSupport.keysOn(nodes.node(0)) == 0);

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
		// a TTL that outlasts two restarts and B's attempts however slow a busy machine
		// makes them: only the quarantine, off here, could keep B out meanwhile
		Duration ttl = Duration.ofSeconds(10);
		try (Redlock a = TestSupport.redlock(nodes, off); Redlock b = TestSupport.redlock(nodes, off)) {
			// connections open before the restarts: one still being opened while a node
			// restarts fails, and the node is not tried again for a few node timeouts
			TestSupport.awaitWarmPools(a);
			TestSupport.awaitWarmPools(b);
			Lease first = a.acquire(RESOURCE, ttl, Duration.ZERO);
			restartForgetting(nodes, 0, 1);

			// B's connections to the restarted nodes died with them: its first
			// attempts may find them so, and it opens new ones
			Lease second = b.acquire(RESOURCE, ttl, Duration.ofSeconds(5));

			assertThat(first.isValid()).as("the first holder is still within its validity").isTrue();
			assertThat(second.isValid()).as("and so is the second: mutual exclusion is lost").isTrue();
			second.release();
		}
	}

	/**
	 * A quarantine of 5 s, so that the restarted nodes are still quarantined when the
	 * test looks, however long a busy machine takes to get there.
	 */
	@Test
	void aQuarantinedNodeIsNamedInTheFailureAndInItsStatus(RedisNodes nodes) {
		Duration quarantine = Duration.ofSeconds(5);
		RedlockSettings settings = SETTINGS.withRestartQuarantine(quarantine);
		try (Redlock a = TestSupport.redlock(nodes, settings); Redlock b = TestSupport.redlock(nodes, settings)) {
			Lease first = acquiredBeforeARestart(nodes, a, b, quarantine);
			// b's connections to the restarted nodes died with them: its next ones read
			// the new run_ids
			TestSupport.awaitTrue("b sees the restarted nodes", Duration.ofSeconds(10), () -> {
				List<NodeStatus> seen = b.checkNodes();
				return !seen.get(0).quarantineRemaining().isZero() && !seen.get(1).quarantineRemaining().isZero();
			});

			assertThatExceptionOfType(LockNotAcquiredException.class)
				.isThrownBy(() -> b.acquire(RESOURCE, TTL, Duration.ZERO))
				.satisfies((ex) -> assertThat(ex.reason()).isEqualTo(LockNotAcquiredException.Reason.NO_QUORUM))
				// the round is settled once no quorum can be had: the replies it did not
				// wait for are named nowhere
				.satisfies((ex) -> assertThat(ex.heldElsewhere()).isSubsetOf(nodes.node(2).uri()))
				.satisfies((ex) -> assertThat(ex.failedNodes()).hasSizeLessThanOrEqualTo(2)
					.allSatisfy((failed) -> assertThat(failed).contains("in quarantine", "restart")))
				.satisfies((ex) -> assertThat(ex.heldElsewhere().size() + ex.failedNodes().size())
					.isGreaterThanOrEqualTo(b.quorum()));

			List<NodeStatus> statuses = b.checkNodes();
			assertThat(statuses.get(0).quarantineRemaining()).isPositive().isLessThanOrEqualTo(quarantine);
			assertThat(statuses.get(1).quarantineRemaining()).isPositive().isLessThanOrEqualTo(quarantine);
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
			TestSupport.awaitTrue("node 2 is seen quarantined", Duration.ofSeconds(10),
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
		// the defaults with the quarantine off, and the shared test node timeout
		RedlockSettings off = TestSupport.SETTINGS;
		assertThat(off.restartQuarantine()).isZero();
		try (Redlock redlock = TestSupport.redlock(nodes, off);
				Lease lease = redlock.acquire(RESOURCE, Duration.ofHours(2), Duration.ZERO)) {
			// a check need not wait for the first connections: every node counts once it
			// answered, whatever its uptime
			TestSupport.awaitTrue("every node counts", Duration.ofSeconds(10),
					() -> redlock.checkNodes().stream().allMatch(NodeStatus::counts));
			assertThat(lease.isValid()).isTrue();
		}
	}

	/**
	 * Once both instances count every node, A acquires the lock; then nodes 0 and 1
	 * restart without it.
	 */
	private static Lease acquiredBeforeARestart(RedisNodes nodes, Redlock a, Redlock b, Duration ttl) {
		awaitOutOfQuarantine(nodes, a, b);
		// connections open before the restarts: one still being opened while a node
		// restarts fails, and the node is not tried again for a few node timeouts
		TestSupport.awaitWarmPools(a);
		TestSupport.awaitWarmPools(b);
		Lease first = a.acquire(RESOURCE, ttl, Duration.ZERO);
		restartForgetting(nodes, 0, 1);
		return first;
	}

	/**
	 * The nodes may have been (re)started by an earlier test: waits until every client
	 * has seen them counting.
	 */
	private static void awaitOutOfQuarantine(RedisNodes nodes, Redlock... clients) {
		for (Redlock client : clients) {
			TestSupport.awaitTrue("every node is out of its restart quarantine",
					client.settings().restartQuarantine().plusSeconds(5),
					() -> client.checkNodes().stream().allMatch(NodeStatus::counts));
		}
	}

	/** Kill -9 and start again without persistence: the node forgets every key. */
	private static void restartForgetting(RedisNodes nodes, int... indexes) {
		for (int index : indexes) {
			nodes.node(index).restart();
			// the clients' probes may have written the node's new marker already
			assertThat(TestSupport.keysOn(nodes.node(index))).as("keys left on the restarted node").isZero();
		}
	}

}
