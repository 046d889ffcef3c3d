package dev.redlock.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Closing a {@code Redlock} tells the holders of its leases, and a closed one says so at
 * once.
 */
@WithRedisNodes(count = 3)
class ClosedRedlockTests {

	private static final Duration TTL = Duration.ofSeconds(10);

	@Test
	void closingSignalsTheLossOfLeasesStillHeld(RedisNodes nodes) {
		List<LossReason> lost = new CopyOnWriteArrayList<>();
		Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS);
		Lease watched = redlock.acquire("watched", TTL, Duration.ZERO);
		watched.onLost(() -> lost.add(watched.lossReason().orElseThrow()));
		Lease renewed = redlock.acquire("renewed", TTL, Duration.ZERO).autoRenew();
		renewed.onLost(() -> lost.add(renewed.lossReason().orElseThrow()));
		Lease released = redlock.acquire("released", TTL, Duration.ZERO);
		released.onLost(() -> lost.add(LossReason.FOUND_EXPIRED));
		released.release();
		redlock.close();
		assertThat(lost).containsExactly(LossReason.REDLOCK_CLOSED, LossReason.REDLOCK_CLOSED);
		assertThat(watched.isValid()).isFalse();
		assertThat(released.isLost()).isFalse();
	}

	@Test
	void aCallbackRegisteredAfterCloseRunsAtOnce(RedisNodes nodes) {
		List<String> ran = new CopyOnWriteArrayList<>();
		Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS);
		Lease lease = redlock.acquire("late-callback", TTL, Duration.ZERO);
		redlock.close();
		lease.onLost(() -> ran.add(Thread.currentThread().getName()));
		assertThat(ran).containsExactly(Thread.currentThread().getName());
		assertThat(lease.lossReason()).contains(LossReason.REDLOCK_CLOSED);
	}

	@Test
	void acquiringFromAClosedRedlockFailsAtOnceSayingSo(RedisNodes nodes) {
		Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS);
		redlock.close();
		assertThatIllegalStateException().isThrownBy(() -> redlock.acquire("late", TTL, Duration.ofSeconds(2)))
			.withMessageContaining("closed");
		assertThatIllegalStateException().isThrownBy(() -> redlock.tryAcquire("late", TTL))
			.withMessageContaining("closed");
		assertThat(redlock.isClosed()).isTrue();
	}

	/**
	 * A round that reached a quorum early and then found no validity left leaves its
	 * value on the slow node to a clean-up after that node's reply. Closing right away
	 * must still remove it, not leave it there for the TTL.
	 */
	@Test
	void closingRightAfterALostAcquisitionStillRemovesItsValueFromASlowNode(RedisNodes nodes) {
		// 300 ms each way: the lost round's value stays on the slow node for
		// about 600 ms before its clean-up lands, long enough for the test to see
		// it there on a busy machine
		Duration oneWay = Duration.ofMillis(300);
		try (LatencyProxy slow = LatencyProxy.to(nodes.node(2), Duration.ZERO)) {
			List<String> uris = List.of(nodes.node(0).uri(), nodes.node(1).uri(), slow.uri());
			RedlockSettings settings = TestSupport.SETTINGS.withNodeTimeout(Duration.ofSeconds(3));
			// every reading of the ticker moves it on by the step: 11 s of a 10 s TTL
			// once armed
			AtomicLong now = new AtomicLong();
			AtomicLong step = new AtomicLong();
			Redlock redlock = Redlock.builder()
				.nodes(uris)
				.settings(settings)
				.ticker(() -> now.getAndAdd(step.get()))
				.build();
			redlock.acquire("warm-up", TTL, Duration.ZERO).release();
			// every connection opened while the proxy is fast (see NodeFailureTests)
			TestSupport.awaitWarmPools(redlock);
			slow.delay(oneWay);
			// waited for in full once: from now on the slow node is known to lag, and a
			// quorum is not kept waiting
			redlock.acquire("measured", TTL, Duration.ZERO).release();
			TestSupport.awaitTrue("the release's late reply from the slow node was read", Duration.ofSeconds(10),
					() -> redlock.internals().idleConnections(2) > 0);
			step.set(Duration.ofSeconds(11).toNanos());
			assertThat(redlock.tryAcquire("lost", TTL)).isEmpty();
			TestSupport.awaitTrue("the lost round's SET reached the slow node", Duration.ofSeconds(5),
					() -> nodes.node(2).command("EXISTS", TestSupport.PREFIX + "lost").equals("1"));
			redlock.close();
			// well within the TTL: gone by the clean-up, not by expiry
			TestSupport.awaitTrue("the lost round's value is gone from the slow node", Duration.ofSeconds(5),
					() -> nodes.node(2).command("EXISTS", TestSupport.PREFIX + "lost").equals("0"));
		}
	}

}
