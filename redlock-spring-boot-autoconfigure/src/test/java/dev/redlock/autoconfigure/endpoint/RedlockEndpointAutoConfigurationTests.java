package dev.redlock.autoconfigure.endpoint;

import java.lang.reflect.Method;
import java.util.Arrays;

import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;

import dev.redlock.autoconfigure.RedlockAutoConfiguration;
import dev.redlock.autoconfigure.health.RedlockHealthContributorAutoConfiguration;
import dev.redlock.core.Redlock;
import dev.redlock.endpoint.RedlockEndpoint;
import dev.redlock.endpoint.RedlockNodesSanitizingFunction;

import static org.assertj.core.api.Assertions.assertThat;

class RedlockEndpointAutoConfigurationTests {

	private static final String[] THREE_NODES = { "redlock.nodes[0]=redis://127.0.0.1:7101",
			"redlock.nodes[1]=redis://127.0.0.1:7102", "redlock.nodes[2]=redis://127.0.0.1:7103" };

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(RedlockAutoConfiguration.class, RedlockEndpointAutoConfiguration.class))
		.withPropertyValues(THREE_NODES);

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
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RedlockAutoConfiguration.class,
					RedlockHealthContributorAutoConfiguration.class, RedlockEndpointAutoConfiguration.class))
			.withPropertyValues(THREE_NODES)
			.withPropertyValues("management.endpoints.web.exposure.include=*")
			.withClassLoader(
					new FilteredClassLoader("org.springframework.boot.actuate", "org.springframework.boot.health"))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(Redlock.class)
				.doesNotHaveBean("redlockEndpoint")
				.doesNotHaveBean("redlockNodesSanitizingFunction")
				.doesNotHaveBean("redlockHealthIndicator"));
	}

	@Test
	void everyBeanBacksOff() {
		Method[] beans = Arrays.stream(RedlockEndpointAutoConfiguration.class.getDeclaredMethods())
			.filter((method) -> method.isAnnotationPresent(Bean.class))
			.toArray(Method[]::new);
		assertThat(beans).hasSize(2);
		for (Method bean : beans) {
			assertThat(bean.isAnnotationPresent(ConditionalOnMissingBean.class)).as(bean.getName()).isTrue();
		}
	}

}
