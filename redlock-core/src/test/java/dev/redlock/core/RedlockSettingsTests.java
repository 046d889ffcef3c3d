package dev.redlock.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class RedlockSettingsTests {

	private final RedlockSettings defaults = RedlockSettings.defaults();

	@Test
	void driftIsFactorOfTtlPlusTwoMillis() {
		RedlockSettings unjudged = this.defaults.withRestartQuarantine(Duration.ZERO);
		assertThat(unjudged.withClockDriftFactor(0.01).driftFor(Duration.ofSeconds(10)))
			.isEqualTo(Duration.ofMillis(102));
		assertThat(unjudged.withClockDriftFactor(0).driftFor(Duration.ofSeconds(10))).isEqualTo(Duration.ofMillis(2));
	}

	@Test
	void withTheQuarantineOnTheDriftAlsoCoversAStepTheClockToleranceHides() {
		// a node cleared twice may have stepped by 3 tolerances in between
		assertThat(this.defaults.clockTolerance()).isEqualTo(Duration.ofMillis(50));
		assertThat(this.defaults.driftFor(Duration.ofSeconds(10))).isEqualTo(Duration.ofMillis(252));
		RedlockSettings tight = this.defaults.toBuilder().clockTolerance(Duration.ofMillis(10)).build();
		assertThat(tight.driftFor(Duration.ofSeconds(10))).isEqualTo(Duration.ofMillis(132));
	}

	@Test
	void aTtlThatTheDriftAllowanceWouldSwallowIsRefusedNamingTheClockTolerance() {
		assertThatExceptionOfType(InvalidRedlockConfigurationException.class)
			.isThrownBy(() -> this.defaults.toBuilder().defaultTtl(Duration.ofMillis(150)).build())
			.withMessageContaining("defaultTtl")
			.withMessageContaining("3 × clockTolerance");
		assertThatExceptionOfType(InvalidRedlockConfigurationException.class)
			.isThrownBy(() -> this.defaults.toBuilder().clockTolerance(Duration.ZERO).build())
			.withMessageContaining("clockTolerance");
	}

	@Test
	void theBuilderStartsFromTheDefaultsOrFromOtherSettingsAndChecksWhatItBuilds() {
		assertThat(RedlockSettings.builder().build()).isEqualTo(this.defaults);
		RedlockSettings custom = RedlockSettings.builder()
			.keyPrefix("locks:")
			.nodeTimeout(Duration.ofMillis(250))
			.poolMaxTotal(8)
			.poolMaxIdle(2)
			.autoRenew(true)
			.build();
		assertThat(custom.keyPrefix()).isEqualTo("locks:");
		assertThat(custom.nodeTimeout()).isEqualTo(Duration.ofMillis(250));
		assertThat(custom.poolMaxTotal()).isEqualTo(8);
		assertThat(custom.poolMaxIdle()).isEqualTo(2);
		assertThat(custom.autoRenew()).isTrue();
		assertThat(custom.defaultTtl()).isEqualTo(this.defaults.defaultTtl());
		assertThat(custom.toBuilder().build()).isEqualTo(custom);
		assertThat(custom.toBuilder().maxHold(Duration.ofMinutes(1)).build())
			.isEqualTo(custom.toBuilder().maxHold(Duration.ofMinutes(1)).build());
		assertInvalid("poolMaxTotal", () -> custom.toBuilder().poolMaxTotal(0).build());
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
		assertInvalid("defaultWaitTime",
				() -> this.defaults.toBuilder().defaultWaitTime(Duration.ofMillis(-1)).build());
		assertInvalid("retryDelay", () -> this.defaults.withRetryDelay(Duration.ZERO));
		assertInvalid("nodeTimeout", () -> this.defaults.withNodeTimeout(Duration.ZERO));
		assertInvalid("nodeTimeout", () -> this.defaults.withNodeTimeout(Duration.ofNanos(10)));
		assertInvalid("maxExtensions", () -> this.defaults.toBuilder().maxExtensions(-1).build());
		assertInvalid("poolMaxTotal", () -> this.defaults.withPool(0, 0));
		assertInvalid("poolMaxIdle", () -> this.defaults.withPool(1, -1));
	}

	@Test
	void zeroWaitTimeIsAllowed() {
		assertThat(this.defaults.toBuilder().defaultWaitTime(Duration.ZERO).build().defaultWaitTime()).isZero();
	}

	private static void assertInvalid(String setting, Runnable action) {
		assertThatExceptionOfType(InvalidRedlockConfigurationException.class).isThrownBy(action::run)
			.satisfies((ex) -> assertThat(ex.setting()).isEqualTo(setting))
			.satisfies((ex) -> assertThat(ex.getMessage()).startsWith(setting + ": "));
	}

}
