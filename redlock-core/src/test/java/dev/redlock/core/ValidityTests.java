package dev.redlock.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.redlock.core.TestSupport.ScriptedTicker;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Validity = ttl - elapsed - drift, with elapsed read from the ticker before the first
 * write and after the last reply. With ttl 10 s and factor 0.01, drift is 102 ms, so at
 * most 9,898 ms may elapse.
 */
@WithRedisNodes(count = 3)
class ValidityTests {

	private static final Duration TTL = Duration.ofSeconds(10);

	private final RedlockSettings settings = TestSupport.SETTINGS.withClockDriftFactor(0.01);

	@Test
	void acquiredWhenValidityRemainsAfterElapsedAndDrift(RedisNodes nodes) {
		try (Redlock redlock = redlockReading(nodes, Duration.ZERO, Duration.ofMillis(9_897))) {
			Lease lease = redlock.tryAcquire("validity", TTL).orElseThrow();
			assertThat(lease.remainingValidity()).isEqualTo(Duration.ofMillis(1));
			assertThat(lease.isValid()).isTrue();
			lease.release();
		}
	}

	@Test
	void notAcquiredWhenNoValidityRemainsAndNothingIsLeftBehind(RedisNodes nodes) {
		try (Redlock redlock = redlockReading(nodes, Duration.ZERO, Duration.ofMillis(9_898))) {
			assertThat(redlock.tryAcquire("validity", TTL)).isEmpty();
		}
		TestSupport.awaitNoKeys(nodes);
	}

	@Test
	void tooSlowQuorumIsReportedAsValidityExhausted(RedisNodes nodes) {
		try (Redlock redlock = redlockReading(nodes, Duration.ZERO, Duration.ZERO, Duration.ofSeconds(11))) {
			assertThatExceptionOfType(LockNotAcquiredException.class)
				.isThrownBy(() -> redlock.acquire("validity", TTL, Duration.ZERO))
				.satisfies(
						(ex) -> assertThat(ex.reason()).isEqualTo(LockNotAcquiredException.Reason.VALIDITY_EXHAUSTED));
		}
		TestSupport.awaitNoKeys(nodes);
	}

	@Test
	void extensionRestartsValidityFromItsOwnStart(RedisNodes nodes) {
		try (Redlock redlock = redlockReading(nodes, Duration.ZERO, Duration.ofMillis(1), Duration.ofSeconds(5),
				Duration.ofMillis(5_001))) {
			Lease lease = redlock.tryAcquire("validity", TTL).orElseThrow();
			assertThat(lease.extend(TTL)).isTrue();
			// 5 s + 10 s - 102 ms - 5.001 s
			assertThat(lease.remainingValidity()).isEqualTo(Duration.ofMillis(9_897));
			lease.release();
		}
	}

	/**
	 * An extension that ends after the validity did leaves none, even when it started in
	 * time; one to a shorter TTL shortens the validity too, since the nodes applied it
	 * even though the extension came too late to count.
	 */
	@ParameterizedTest(name = "extended to {0} ms from {1} ms to {2} ms")
	@CsvSource({ "10000, 9800, 9900", "100, 1000, 1200" })
	void extensionFinishingAfterTheValidityEndedDoesNotCount(long ttlMillis, long startMillis, long endMillis,
			RedisNodes nodes) {
		try (Redlock redlock = redlockReading(nodes, Duration.ZERO, Duration.ofMillis(1),
				Duration.ofMillis(startMillis), Duration.ofMillis(endMillis))) {
			Lease lease = redlock.tryAcquire("validity", TTL).orElseThrow();
			assertThat(lease.extend(Duration.ofMillis(ttlMillis))).isFalse();
			assertThat(lease.remainingValidity()).isZero();
			assertThat(lease.isValid()).isFalse();
			lease.release();
		}
	}

	@Test
	void ttlWithinTheDriftAllowanceIsRefused(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			assertThatIllegalArgumentException().isThrownBy(() -> redlock.tryAcquire("validity", Duration.ofMillis(2)))
				.withMessageContaining("drift");
			Lease lease = redlock.tryAcquire("validity", TTL).orElseThrow();
			assertThatIllegalArgumentException().isThrownBy(() -> lease.extend(Duration.ofMillis(2)))
				.withMessageContaining("drift");
			assertThat(lease.isValid()).isTrue();
			lease.release();
		}
	}

	@Test
	void expiredLeaseIsNotExtendedAndNodesAreNotAsked(RedisNodes nodes) {
		try (Redlock redlock = redlockReading(nodes, Duration.ZERO, Duration.ofMillis(1), Duration.ofSeconds(20))) {
			// every node's connections open, so that node 0 gets the SET; and it is read
			// once it landed, not while it may still be on its way
			TestSupport.awaitWarmPools(redlock);
			Lease lease = redlock.tryAcquire("validity", TTL).orElseThrow();
			TestSupport.awaitTrue("the lock is on node 0", Duration.ofSeconds(5),
					() -> "1".equals(nodes.node(0).command("EXISTS", TestSupport.PREFIX + "validity")));
			String ttlBefore = nodes.node(0).command("PTTL", TestSupport.PREFIX + "validity");
			assertThat(lease.extend(Duration.ofMinutes(5))).isFalse();
			assertThat(Long.parseLong(nodes.node(0).command("PTTL", TestSupport.PREFIX + "validity")))
				.isLessThanOrEqualTo(Long.parseLong(ttlBefore));
			assertThat(lease.extensionAttempts()).isZero();
			lease.release();
		}
	}

	/** A Redlock whose clock gives the readings in turn, then the last one again. */
	private Redlock redlockReading(RedisNodes nodes, Duration... readings) {
		return TestSupport.redlock(nodes, this.settings, new ScriptedTicker(readings));
	}

}
