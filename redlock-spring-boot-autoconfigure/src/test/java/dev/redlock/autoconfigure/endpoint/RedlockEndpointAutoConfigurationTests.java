package dev.redlock.autoconfigure.endpoint;

import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.redlock.autoconfigure.AutoConfigurationTesting;
import dev.redlock.autoconfigure.health.RedlockHealthContributorAutoConfiguration;
import dev.redlock.core.Redlock;
import dev.redlock.endpoint.RedlockEndpoint;
import dev.redlock.endpoint.RedlockNodesSanitizingFunction;

import static org.assertj.core.api.Assertions.assertThat;

class RedlockEndpointAutoConfigurationTests {

	private final ApplicationContextRunner runner = AutoConfigurationTesting
		.runnerWithThreeNodes(RedlockEndpointAutoConfiguration.class);

	@Test
	void endpointIsAbsentUntilExposed() {
		this.runner
			.run((context) -> assertThat(context).hasSingleBean(Redlock.class).doesNotHaveBean(RedlockEndpoint.class));
	}

	@Test
	void endpointExposedOverTheWeb() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=redlock")
			.run((context) -> assertThat(context).hasSingleBean(RedlockEndpoint.class));
	}

	@Test
	void endpointAccessNoneTurnsItOff() {
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=redlock",
					"management.endpoint.redlock.access=NONE")
			.run((context) -> assertThat(context).doesNotHaveBean(RedlockEndpoint.class));
	}

	@Test
	void endpointNeedsARedlockBean() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=redlock", "redlock.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RedlockEndpoint.class));
	}

	@Test
	void endpointBacksOffWhenTheApplicationDefinesOne() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=redlock")
			.withBean("myEndpoint", RedlockEndpoint.class,
					() -> new RedlockEndpoint(Redlock.builder().node("redis://127.0.0.1:7201").build()))
			.run((context) -> assertThat(context).hasSingleBean(RedlockEndpoint.class).hasBean("myEndpoint"));
	}

	@Test
	void sanitizingFunctionIsRegisteredWhetherOrNotTheEndpointIsExposed() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(RedlockNodesSanitizingFunction.class)
			.getBean(SanitizingFunction.class)
			.isInstanceOf(RedlockNodesSanitizingFunction.class));
		this.runner.withPropertyValues("redlock.enabled=false")
			.run((context) -> assertThat(context).hasSingleBean(RedlockNodesSanitizingFunction.class));
	}

	@Test
	void withoutActuatorOrHealthOnTheClasspathTheApplicationStartsWithRedlockOnly() {
		AutoConfigurationTesting
			.runnerWithThreeNodes(RedlockHealthContributorAutoConfiguration.class,
					RedlockEndpointAutoConfiguration.class)
			.withPropertyValues("management.endpoints.web.exposure.include=*")
			.withClassLoader(
					new FilteredClassLoader("org.springframework.boot.actuate", "org.springframework.boot.health"))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(Redlock.class)
				.doesNotHaveBean("redlockEndpoint")
				.doesNotHaveBean("redlockNodesSanitizingFunction")
				.doesNotHaveBean("redlockHealthIndicator"));
	}

}
