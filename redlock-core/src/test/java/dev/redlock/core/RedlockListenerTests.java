package dev.redlock.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import dev.redlock.core.RedlockListener.AcquireEvent;
import dev.redlock.core.RedlockListener.AcquireOutcome;
import dev.redlock.core.RedlockListener.ExtendEvent;
import dev.redlock.core.RedlockListener.ExtendOutcome;
import dev.redlock.core.RedlockListener.NodeCommand;
import dev.redlock.core.RedlockListener.NodeOutcome;
import dev.redlock.core.RedlockListener.NodeRequestEvent;
import dev.redlock.core.RedlockListener.ReleaseEvent;
import dev.redlock.core.TestSupport.ManualTicker;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What listeners, statistics, held leases and node checks report, on real nodes.
 */
@WithRedisNodes(count = 3)
class RedlockListenerTests {

	private final RedlockSettings settings = TestSupport.SETTINGS.withRetryDelay(Duration.ofMillis(10));

	@Test
	void everyAcquisitionReleaseAndExtensionIsReported(RedisNodes nodes) {
		Recorder recorder = new Recorder();
		try (Redlock redlock = Redlock.builder().nodes(nodes.uris()).settings(this.settings).listener(recorder).build();
				Redlock other = TestSupport.redlock(nodes, this.settings)) {
			// every node's connections open first, in both instances: a round does not
			// wait for a connection still being opened, so it could reach only a quorum
			TestSupport.awaitWarmPools(redlock);
			TestSupport.awaitWarmPools(other);
			recorder.clear();
			for (int i = 0; i < 5; i++) {
				try (Lease lease = redlock.acquire(LockRequest.of("order:" + i, Duration.ofSeconds(10)).named("orders"),
						Duration.ZERO)) {
					assertThat(lease.extend()).isTrue();
				}
			}
			// a round returns once a quorum has answered; the third node's reply is
			// reported from its late-reply thread
			TestSupport.awaitTrue("every node's reply reported", Duration.ofSeconds(5),
					() -> recorder.nodeRequests.stream().filter((e) -> e.outcome() == NodeOutcome.OK).count() == 45);
			try (Lease held = other.acquire("order:busy", Duration.ofSeconds(10), Duration.ZERO)) {
				// the other instance's SET reaches the last node a moment after its round
				TestSupport.awaitTrue("the busy lock is on every node", Duration.ofSeconds(5),
						() -> TestSupport.nodesWithKey(nodes, "redlock:order:busy") == nodes.size());
				assertThatExceptionOfType(LockNotAcquiredException.class).isThrownBy(() -> redlock.acquire(
						LockRequest.of("order:busy", Duration.ofSeconds(10)).named("orders"), Duration.ofMillis(50)));
				assertThat(redlock.tryAcquire(LockRequest.of("order:busy", Duration.ofSeconds(10)).named("orders")))
					.isEmpty();
				// a round is settled once a quorum refused: the last node's refusal is
				// reported from its late-reply thread
				TestSupport.awaitTrue("every node's refusal reported", Duration.ofSeconds(5),
						() -> recorder.nodeRequests.stream()
							.filter((e) -> e.command() == NodeCommand.ACQUIRE && e.outcome() == NodeOutcome.REJECTED)
							.count() >= 6);
			}
		}
		assertThat(recorder.acquires).hasSize(7)
			.allSatisfy((event) -> assertThat(event.lockName()).isEqualTo("orders"));
		assertThat(recorder.acquires.stream().filter((e) -> e.outcome() == AcquireOutcome.ACQUIRED)).hasSize(5)
			.allSatisfy((event) -> {
				assertThat(event.attempts()).isEqualTo(1);
				assertThat(event.validity()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(10));
			});
		assertThat(recorder.acquires.stream().filter((e) -> e.outcome() == AcquireOutcome.CONTENDED)).hasSize(2)
			.allSatisfy((event) -> assertThat(event.validity()).isZero());
		assertThat(recorder.releases).hasSize(5)
			.allSatisfy((event) -> assertThat(event.outcome()).isEqualTo(ReleaseOutcome.RELEASED));
		assertThat(recorder.extensions).hasSize(5)
			.allSatisfy((event) -> assertThat(event.outcome()).isEqualTo(ExtendOutcome.EXTENDED));
		// 5 acquisitions, 5 extensions and 5 releases on 3 nodes, all ok; the contended
		// attempts were rejected
		assertThat(recorder.nodeRequests.stream().filter((e) -> e.outcome() == NodeOutcome.OK)).hasSize(45);
		assertThat(recorder.nodeRequests.stream()
			.filter((e) -> e.command() == NodeCommand.ACQUIRE && e.outcome() == NodeOutcome.REJECTED))
			.hasSizeGreaterThanOrEqualTo(6);
		assertThat(recorder.nodeRequests).allSatisfy((event) -> assertThat(event.node()).startsWith("127.0.0.1:"));
	}

	@Test
	void killedNodeShowsAsErrorAndFrozenNodeAsTimeout(RedisNodes nodes) {
		Recorder recorder = new Recorder();
		nodes.node(0).kill();
		nodes.node(1).pause();
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings, recorder)) {
			assertThat(redlock.tryAcquire("x", Duration.ofSeconds(5))).isEmpty();
			List<NodeStatistics> statistics = redlock.nodeStatistics();
			assertThat(statistics.get(0).errors()).isPositive();
			assertThat(statistics.get(1).timeouts()).isPositive();
			assertThat(statistics.get(2).ok()).isPositive();
			assertThat(statistics.get(0).node()).isEqualTo(nodes.node(0).uri());
		}
		assertThat(recorder.nodeRequests).anySatisfy((event) -> {
			assertThat(event.node()).isEqualTo("127.0.0.1:" + nodes.node(0).port());
			assertThat(event.outcome()).isEqualTo(NodeOutcome.ERROR);
		});
		assertThat(recorder.nodeRequests).anySatisfy((event) -> {
			assertThat(event.node()).isEqualTo("127.0.0.1:" + nodes.node(1).port());
			assertThat(event.outcome()).isEqualTo(NodeOutcome.TIMEOUT);
		});
		assertThat(recorder.acquires).singleElement()
			.satisfies((event) -> assertThat(event.outcome()).isEqualTo(AcquireOutcome.NO_QUORUM));
		nodes.node(1).resume();
	}

	@Test
	void failingListenerCannotStopTheLock(RedisNodes nodes) {
		RedlockListener failing = new RedlockListener() {
			@Override
			public void acquireFinished(AcquireEvent event) {
				throw new IllegalStateException("listener bug");
			}

			@Override
			public void leaseReleased(ReleaseEvent event) {
				throw new IllegalStateException("listener bug");
			}

			@Override
			public void nodeRequestFinished(NodeRequestEvent event) {
				throw new IllegalStateException("listener bug");
			}
		};
		try (Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS, failing)) {
			Lease lease = redlock.acquire("safe", Duration.ofSeconds(5), Duration.ZERO);
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
		}
		TestSupport.awaitNoKeys(nodes);
	}

	@Test
	void heldLeasesListsValidUnreleasedLeases(RedisNodes nodes) {
		// the leases' clock stands still until the test moves it past the short
		// lease's validity: on a busy machine that lease could otherwise run out
		// before it is listed
		ManualTicker ticker = new ManualTicker();
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings, ticker)) {
			Lease first = redlock.acquire(LockRequest.of("job:1", Duration.ofSeconds(10)).named("jobs"), Duration.ZERO);
			Lease second = redlock.acquire(LockRequest.of("job:2", Duration.ofMillis(300)).named("jobs"),
					Duration.ZERO);
			assertThat(redlock.heldLeases()).containsExactlyInAnyOrder(first, second);
			first.release();
			assertThat(redlock.heldLeases()).containsExactly(second);
			ticker.advance(Duration.ofSeconds(1));
			assertThat(second.isValid()).as("the short lease ran out").isFalse();
			assertThat(redlock.heldLeases()).isEmpty();
			assertThat(first.name()).isEqualTo("jobs");
			assertThat(first.acquiredAt()).isBeforeOrEqualTo(Instant.now());
		}
	}

	@Test
	void checkNodesReportsVersionRoleAndReachability(RedisNodes nodes) {
		nodes.node(2).kill();
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			// a check opens a connection where none is open yet, without waiting for
			// the warm-up: on a busy machine a live node may take longer than a node
			// timeout to answer the first time
			AtomicReference<List<NodeStatus>> checked = new AtomicReference<>();
			TestSupport.awaitTrue("both live nodes answer a check", Duration.ofSeconds(10), () -> {
				checked.set(redlock.checkNodes());
				return checked.get().get(0).reachable() && checked.get().get(1).reachable();
			});
			List<NodeStatus> statuses = checked.get();
			assertThat(statuses).hasSize(3);
			assertThat(statuses.subList(0, 2)).allSatisfy((status) -> {
				assertThat(status.reachable()).isTrue();
				assertThat(status.isMaster()).isTrue();
				assertThat(status.version()).matches("(valkey )?\\d+\\.\\d+\\.\\d+");
				assertThat(status.lockCommands()).isIn("scripts", "delex", "delifeq");
				assertThat(status.uptime()).isNotNull();
				assertThat(status.error()).isNull();
			});
			assertThat(statuses.get(2).reachable()).isFalse();
			assertThat(statuses.get(2).error()).isNotBlank();
			assertThat(statuses.get(2).node()).isEqualTo(nodes.node(2).uri());
		}
	}

	static final class Recorder implements RedlockListener {

		final List<AcquireEvent> acquires = new CopyOnWriteArrayList<>();

		final List<ReleaseEvent> releases = new CopyOnWriteArrayList<>();

		final List<ExtendEvent> extensions = new CopyOnWriteArrayList<>();

		final List<NodeRequestEvent> nodeRequests = new CopyOnWriteArrayList<>();

		void clear() {
			this.acquires.clear();
			this.releases.clear();
			this.extensions.clear();
			this.nodeRequests.clear();
		}

		@Override
		public void acquireFinished(AcquireEvent event) {
			this.acquires.add(event);
		}

		@Override
		public void leaseReleased(ReleaseEvent event) {
			this.releases.add(event);
		}

		@Override
		public void leaseExtended(ExtendEvent event) {
			this.extensions.add(event);
		}

		@Override
		public void nodeRequestFinished(NodeRequestEvent event) {
			this.nodeRequests.add(event);
		}

	}

}
