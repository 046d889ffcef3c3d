package dev.redlock.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

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
		ScriptedTicker ticker = new ScriptedTicker(Duration.ZERO, Duration.ofMillis(9_897));
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings, ticker)) {
			Lease lease = redlock.tryAcquire("validity", TTL).orElseThrow();
			assertThat(lease.remainingValidity()).isEqualTo(Duration.ofMillis(1));
			assertThat(lease.isValid()).isTrue();
			lease.release();
		}
	}

	@Test
	void notAcquiredWhenNoValidityRemainsAndNothingIsLeftBehind(RedisNodes nodes) {
		ScriptedTicker ticker = new ScriptedTicker(Duration.ZERO, Duration.ofMillis(9_898));
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings, ticker)) {
			assertThat(redlock.tryAcquire("validity", TTL)).isEmpty();
		}
		TestSupport.awaitNoKeys(nodes);
	}

	@Test
	void tooSlowQuorumIsReportedAsValidityExhausted(RedisNodes nodes) {
		ScriptedTicker ticker = new ScriptedTicker(Duration.ZERO, Duration.ZERO, Duration.ofSeconds(11));
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings, ticker)) {
			assertThatExceptionOfType(LockNotAcquiredException.class)
				.isThrownBy(() -> redlock.acquire("validity", TTL, Duration.ZERO))
				.satisfies(
						(ex) -> assertThat(ex.reason()).isEqualTo(LockNotAcquiredException.Reason.VALIDITY_EXHAUSTED));
		}
		TestSupport.awaitNoKeys(nodes);
	}

	@Test
	void extensionRestartsValidityFromItsOwnStart(RedisNodes nodes) {
		ScriptedTicker ticker = new ScriptedTicker(Duration.ZERO, Duration.ofMillis(1), Duration.ofSeconds(5),
				Duration.ofMillis(5_001));
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings, ticker)) {
			Lease lease = redlock.tryAcquire("validity", TTL).orElseThrow();
			assertThat(lease.extend(TTL)).isTrue();
			// 5 s + 10 s - 102 ms - 5.001 s
			assertThat(lease.remainingValidity()).isEqualTo(Duration.ofMillis(9_897));
			lease.release();
		}
	}

	@Test
	void extensionFinishingAfterTheValidityEndedDoesNotCount(RedisNodes nodes) {
		ScriptedTicker ticker = new ScriptedTicker(Duration.ZERO, Duration.ofMillis(1), Duration.ofMillis(9_800),
				Duration.ofMillis(9_900));
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings, ticker)) {
			Lease lease = redlock.tryAcquire("validity", TTL).orElseThrow();
			assertThat(lease.extend(TTL)).isFalse();
			assertThat(lease.remainingValidity()).isZero();
			lease.release();
		}
	}

	@Test
	void failedExtensionToAShorterTtlShortensTheValidity(RedisNodes nodes) {
		// the nodes applied the 100 ms TTL even though the extension came too late to
		// count
		ScriptedTicker ticker = new ScriptedTicker(Duration.ZERO, Duration.ofMillis(1), Duration.ofSeconds(1),
				Duration.ofMillis(1_200));
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings, ticker)) {
			Lease lease = redlock.tryAcquire("validity", TTL).orElseThrow();
			assertThat(lease.extend(Duration.ofMillis(100))).isFalse();
			assertThat(lease.remainingValidity()).isZero();
			assertThat(lease.isValid()).isFalse();
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
		ScriptedTicker ticker = new ScriptedTicker(Duration.ZERO, Duration.ofMillis(1), Duration.ofSeconds(20));
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings, ticker)) {
			Lease lease = redlock.tryAcquire("validity", TTL).orElseThrow();
			String ttlBefore = nodes.node(0).command("PTTL", TestSupport.PREFIX + "validity");
			assertThat(lease.extend(Duration.ofMinutes(5))).isFalse();
			assertThat(Long.parseLong(nodes.node(0).command("PTTL", TestSupport.PREFIX + "validity")))
				.isLessThanOrEqualTo(Long.parseLong(ttlBefore));
			assertThat(lease.extensionAttempts()).isZero();
			lease.release();
		}
	}

}
