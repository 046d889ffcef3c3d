package dev.redlock.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class RedlockSettingsTests {

	private final RedlockSettings defaults = RedlockSettings.defaults();

	@Test
	void driftIsFactorOfTtlPlusTwoMillis() {
		assertThat(this.defaults.withClockDriftFactor(0.01).driftFor(Duration.ofSeconds(10)))
			.isEqualTo(Duration.ofMillis(102));
		assertThat(this.defaults.withClockDriftFactor(0).driftFor(Duration.ofSeconds(10)))
			.isEqualTo(Duration.ofMillis(2));
	}

	@Test
	void rejectsNonPositiveTtl() {
		assertInvalid("defaultTtl", () -> this.defaults.withDefaultTtl(Duration.ZERO));
		assertInvalid("defaultTtl", () -> this.defaults.withDefaultTtl(Duration.ofSeconds(-1)));
	}

	@Test
	void rejectsTtlWithinTheDriftAllowance() {
		assertInvalid("defaultTtl", () -> this.defaults.withDefaultTtl(Duration.ofMillis(2)));
	}

	@Test
	void rejectsDriftFactorOutsideZeroToOne() {
		assertInvalid("clockDriftFactor", () -> this.defaults.withClockDriftFactor(1.0));
		assertInvalid("clockDriftFactor", () -> this.defaults.withClockDriftFactor(-0.1));
	}

	@Test
	void rejectsBadTimesAndSizes() {
		assertInvalid("defaultWaitTime", () -> this.defaults.withDefaultWaitTime(Duration.ofMillis(-1)));
		assertInvalid("retryDelay", () -> this.defaults.withRetryDelay(Duration.ZERO));
		assertInvalid("nodeTimeout", () -> this.defaults.withNodeTimeout(Duration.ZERO));
		assertInvalid("nodeTimeout", () -> this.defaults.withNodeTimeout(Duration.ofNanos(10)));
		assertInvalid("maxExtensions", () -> this.defaults.withMaxExtensions(-1));
		assertInvalid("poolMaxTotal", () -> this.defaults.withPool(0, 0));
		assertInvalid("poolMaxIdle", () -> this.defaults.withPool(1, -1));
	}

	@Test
	void zeroWaitTimeIsAllowed() {
		assertThat(this.defaults.withDefaultWaitTime(Duration.ZERO).defaultWaitTime()).isZero();
	}

	private static void assertInvalid(String setting, Runnable action) {
		assertThatExceptionOfType(InvalidRedlockConfigurationException.class).isThrownBy(action::run)
			.satisfies((ex) -> assertThat(ex.setting()).isEqualTo(setting))
			.satisfies((ex) -> assertThat(ex.getMessage()).startsWith(setting + ": "));
	}

}
