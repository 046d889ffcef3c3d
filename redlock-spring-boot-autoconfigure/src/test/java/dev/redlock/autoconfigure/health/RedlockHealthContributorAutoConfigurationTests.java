package dev.redlock.autoconfigure.health;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.redlock.autoconfigure.AutoConfigurationTesting;
import dev.redlock.core.Redlock;
import dev.redlock.health.RedlockHealthIndicator;

import static org.assertj.core.api.Assertions.assertThat;

class RedlockHealthContributorAutoConfigurationTests {

	private final ApplicationContextRunner runner = AutoConfigurationTesting
		.runnerWithThreeNodes(RedlockHealthContributorAutoConfiguration.class);

	@Test
	void registersTheIndicatorUnderTheNameRedlock() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(RedlockHealthIndicator.class)
			.hasBean("redlockHealthIndicator"));
	}

	/**
	 * Turned off like any health indicator, alone or with all of them, and absent without
	 * a Redlock.
	 */
	@ParameterizedTest
	@CsvSource({ "management.health.redlock.enabled=false, 1", "management.health.defaults.enabled=false, 1",
			"redlock.enabled=false, 0" })
	void absentWhenTurnedOff(String property, int redlocks) {
		this.runner.withPropertyValues(property)
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(RedlockHealthIndicator.class)
				.getBeans(Redlock.class)
				.hasSize(redlocks));
	}

	@Test
	void backsOffWhenTheApplicationDefinesABeanOfTheSameName() {
		this.runner.withBean("redlockHealthIndicator", HealthIndicator.class, () -> () -> Health.up().build())
			.run((context) -> assertThat(context).hasBean("redlockHealthIndicator")
				.doesNotHaveBean(RedlockHealthIndicator.class));
	}

	@Test
	void absentWithoutSpringBootHealthOnTheClasspath() {
		this.runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.health"))
			.run((context) -> assertThat(context).hasSingleBean(Redlock.class)
				.doesNotHaveBean("redlockHealthIndicator"));
	}

}
