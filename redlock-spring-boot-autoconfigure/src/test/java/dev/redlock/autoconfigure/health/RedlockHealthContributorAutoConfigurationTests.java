package dev.redlock.autoconfigure.health;

import java.lang.reflect.Method;
import java.util.Arrays;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;

import dev.redlock.autoconfigure.RedlockAutoConfiguration;
import dev.redlock.core.Redlock;
import dev.redlock.health.RedlockHealthIndicator;

import static org.assertj.core.api.Assertions.assertThat;

class RedlockHealthContributorAutoConfigurationTests {

	private static final String[] THREE_NODES = { "redlock.nodes[0]=redis://127.0.0.1:7101",
			"redlock.nodes[1]=redis://127.0.0.1:7102", "redlock.nodes[2]=redis://127.0.0.1:7103" };

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(RedlockAutoConfiguration.class, RedlockHealthContributorAutoConfiguration.class))
		.withPropertyValues(THREE_NODES);

	@Test
	void registersTheIndicatorUnderTheNameRedlock() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(RedlockHealthIndicator.class)
			.hasBean("redlockHealthIndicator"));
	}

	@Test
	void managementHealthRedlockEnabledFalseTurnsItOff() {
		this.runner.withPropertyValues("management.health.redlock.enabled=false")
			.run((context) -> assertThat(context).hasSingleBean(Redlock.class)
				.doesNotHaveBean(RedlockHealthIndicator.class));
	}

	@Test
	void followsTheDefaultOfAllHealthIndicators() {
		this.runner.withPropertyValues("management.health.defaults.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RedlockHealthIndicator.class));
	}

	@Test
	void backsOffWhenTheApplicationDefinesABeanOfTheSameName() {
		this.runner.withBean("redlockHealthIndicator", HealthIndicator.class, () -> () -> Health.up().build())
			.run((context) -> assertThat(context).hasBean("redlockHealthIndicator")
				.doesNotHaveBean(RedlockHealthIndicator.class));
	}

	@Test
	void absentWithoutARedlockBean() {
		this.runner.withPropertyValues("redlock.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RedlockHealthIndicator.class));
	}

	@Test
	void absentWithoutSpringBootHealthOnTheClasspath() {
		this.runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.health"))
			.run((context) -> assertThat(context).hasSingleBean(Redlock.class)
				.doesNotHaveBean("redlockHealthIndicator"));
	}

	@Test
	void everyBeanBacksOff() {
		Method[] beans = Arrays.stream(RedlockHealthContributorAutoConfiguration.class.getDeclaredMethods())
			.filter((method) -> method.isAnnotationPresent(Bean.class))
			.toArray(Method[]::new);
		assertThat(beans).hasSize(1);
		for (Method bean : beans) {
			assertThat(bean.isAnnotationPresent(ConditionalOnMissingBean.class)).as(bean.getName()).isTrue();
		}
	}

}
