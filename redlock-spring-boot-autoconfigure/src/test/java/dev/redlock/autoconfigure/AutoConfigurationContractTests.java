package dev.redlock.autoconfigure;

import java.lang.reflect.Method;
import java.util.Arrays;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every auto-configuration of the library promises: it is registered, so Boot finds
 * it, and each of its beans backs off when the application defines its own.
 */
class AutoConfigurationContractTests {

	@ParameterizedTest(name = "{0}")
	@CsvSource({ "dev.redlock.autoconfigure.RedlockAutoConfiguration, 4",
			"dev.redlock.autoconfigure.metrics.RedlockMetricsAutoConfiguration, 2",
			"dev.redlock.autoconfigure.observation.RedlockObservationAutoConfiguration, 1",
			"dev.redlock.autoconfigure.health.RedlockHealthContributorAutoConfiguration, 1",
			"dev.redlock.autoconfigure.endpoint.RedlockEndpointAutoConfiguration, 3" })
	void backsOffForEveryBeanTheApplicationDefines(Class<?> autoConfiguration, int beans) {
		Method[] methods = Arrays.stream(autoConfiguration.getDeclaredMethods())
			.filter((method) -> method.isAnnotationPresent(Bean.class))
			.toArray(Method[]::new);
		assertThat(methods).hasSize(beans)
			.allSatisfy((method) -> assertThat(method.isAnnotationPresent(ConditionalOnMissingBean.class))
				.as("@ConditionalOnMissingBean on %s", method.getName())
				.isTrue());
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource({ "dev.redlock.autoconfigure.RedlockAutoConfiguration",
			"dev.redlock.autoconfigure.metrics.RedlockMetricsAutoConfiguration",
			"dev.redlock.autoconfigure.observation.RedlockObservationAutoConfiguration",
			"dev.redlock.autoconfigure.health.RedlockHealthContributorAutoConfiguration",
			"dev.redlock.autoconfigure.endpoint.RedlockEndpointAutoConfiguration" })
	void autoConfigurationIsRegistered(Class<?> autoConfiguration) {
		assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()).getCandidates())
			.contains(autoConfiguration.getName());
	}

}
