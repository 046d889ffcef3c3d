package dev.redlock.core;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import org.junit.jupiter.api.Test;

import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Arguments at the edges are refused with an {@link IllegalArgumentException} that names
 * them, and a failure after a won round leaves nothing on the nodes.
 */
@WithRedisNodes(count = 3)
class InputEdgeTests {

	/** Beyond the nanosecond range of the monotonic clock (about 292 years). */
	private static final Duration CENTURIES = ChronoUnit.CENTURIES.getDuration().multipliedBy(3);

	@Test
	void durationsBeyondTheClocksRangeAreRefusedByName(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS)) {
			assertThatIllegalArgumentException().isThrownBy(() -> redlock.acquire("long", CENTURIES, Duration.ZERO))
				.withMessageContaining("Lock TTL");
			assertThatIllegalArgumentException().isThrownBy(() -> redlock.tryAcquire("long", CENTURIES))
				.withMessageContaining("Lock TTL");
			assertThatIllegalArgumentException()
				.isThrownBy(() -> redlock.acquire("long", Duration.ofSeconds(10), CENTURIES))
				.withMessageContaining("wait time");
			try (Lease lease = redlock.acquire("long", Duration.ofSeconds(10), Duration.ZERO)) {
				assertThatIllegalArgumentException().isThrownBy(() -> lease.extend(CENTURIES))
					.withMessageContaining("Lock TTL");
				assertThatIllegalArgumentException().isThrownBy(() -> lease.autoRenew(CENTURIES))
					.withMessageContaining("maxHold");
				assertThatIllegalArgumentException().isThrownBy(() -> lease.release(CENTURIES))
					.withMessageContaining("minHold");
				assertThat(lease.isValid()).isTrue();
			}
			TestSupport.awaitNoKeys(nodes);
		}
	}

	@Test
	void aLockNameIsRequired(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS)) {
			assertThatIllegalArgumentException().isThrownBy(
					() -> redlock.acquire(LockRequest.of("named", Duration.ofSeconds(10)).named(null), Duration.ZERO))
				.withMessageContaining("Lock name");
			assertThatIllegalArgumentException()
				.isThrownBy(() -> redlock.tryAcquire(LockRequest.of("named", Duration.ofSeconds(10)).named(" ")))
				.withMessageContaining("Lock name");
			TestSupport.awaitNoKeys(nodes);
		}
	}

	/**
	 * An {@link Error} from a listener after a won round changes nothing: the caller gets
	 * its lease.
	 */
	@Test
	void aListenerErrorAfterAWonRoundNeitherFailsTheCallerNorLeavesTheLock(RedisNodes nodes) {
		RedlockListener failing = TestSupport.onAcquireFinished((event) -> {
			throw new StackOverflowError("a listener's bug");
		});
		try (Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS, failing)) {
			Lease lease = redlock.acquire("won", Duration.ofSeconds(10), Duration.ZERO);
			assertThat(lease.isValid()).isTrue();
			assertThat(redlock.listenerFailures()).isEqualTo(1);
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
			TestSupport.awaitNoKeys(nodes);
		}
	}

}
