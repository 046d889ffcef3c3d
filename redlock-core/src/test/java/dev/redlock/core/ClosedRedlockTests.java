package dev.redlock.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import dev.redlock.core.RedlockListener.LossReason;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Closing a {@code Redlock} tells the holders of its leases, and a closed one says so at once.
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

}
