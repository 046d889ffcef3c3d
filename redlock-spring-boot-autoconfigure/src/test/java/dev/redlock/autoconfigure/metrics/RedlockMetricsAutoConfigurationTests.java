package dev.redlock.autoconfigure.metrics;

import java.util.stream.Stream;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.redlock.autoconfigure.AutoConfigurationTesting;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockListener;
import dev.redlock.metrics.RedlockHeldLeasesMeterBinder;
import dev.redlock.metrics.RedlockMetricsListener;

import static org.assertj.core.api.Assertions.assertThat;

class RedlockMetricsAutoConfigurationTests {

	private final ApplicationContextRunner runner = AutoConfigurationTesting
		.runnerWithThreeNodes(RedlockMetricsAutoConfiguration.class);

	@Test
	void registersTheListenerAndTheGaugeWhenThereIsAMeterRegistry() {
		this.runner.withBean(SimpleMeterRegistry.class).run((context) -> {
			assertThat(context).hasSingleBean(RedlockMetricsListener.class)
				.hasSingleBean(RedlockHeldLeasesMeterBinder.class)
				.hasSingleBean(Redlock.class);
			SimpleMeterRegistry registry = context.getBean(SimpleMeterRegistry.class);
			context.getBean(RedlockHeldLeasesMeterBinder.class).bindTo(registry);
			assertThat(registry.get("redlock.held").gauge().value()).isZero();
			assertThat(registry.get("redlock.waiters").gauge().value()).isZero();
			assertThat(registry.get("redlock.listener.failures").functionCounter().count()).isZero();
		});
	}

	@Test
	void registersNothingWithoutAMeterRegistryBean() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(Redlock.class)
			.doesNotHaveBean(RedlockMetricsListener.class)
			.doesNotHaveBean(RedlockHeldLeasesMeterBinder.class)
			.doesNotHaveBean(RedlockListener.class));
	}

	@ParameterizedTest
	@MethodSource("withoutMicrometer")
	void startsWithoutMicrometerOnTheClasspath(FilteredClassLoader classLoader) {
		this.runner.withClassLoader(classLoader)
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(Redlock.class)
				.doesNotHaveBean(RedlockMetricsListener.class)
				.doesNotHaveBean(RedlockHeldLeasesMeterBinder.class));
	}

	static Stream<Named<FilteredClassLoader>> withoutMicrometer() {
		return Stream.of(Named.of("without Micrometer", new FilteredClassLoader("io.micrometer")),
				Named.of("without MeterRegistry", new FilteredClassLoader(MeterRegistry.class)));
	}

	@Test
	void backsOffWhenTheApplicationDefinesItsOwnListener() {
		SimpleMeterRegistry other = new SimpleMeterRegistry();
		this.runner.withBean(SimpleMeterRegistry.class)
			.withBean("myMetricsListener", RedlockMetricsListener.class, () -> new RedlockMetricsListener(other))
			.run((context) -> assertThat(context).hasSingleBean(RedlockMetricsListener.class)
				.hasBean("myMetricsListener")
				.hasSingleBean(RedlockHeldLeasesMeterBinder.class));
	}

	@Test
	void disabledSwitchTurnsMetricsOff() {
		this.runner.withBean(SimpleMeterRegistry.class)
			.withPropertyValues("redlock.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RedlockMetricsListener.class)
				.doesNotHaveBean(RedlockHeldLeasesMeterBinder.class));
	}

}
