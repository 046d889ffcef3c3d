package dev.redlock.autoconfigure.metrics;

import java.lang.reflect.Method;
import java.util.Arrays;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;

import dev.redlock.autoconfigure.RedlockAutoConfiguration;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockListener;
import dev.redlock.metrics.RedlockHeldLeasesMeterBinder;
import dev.redlock.metrics.RedlockMetricsListener;

import static org.assertj.core.api.Assertions.assertThat;

class RedlockMetricsAutoConfigurationTests {

	private static final String[] THREE_NODES = { "redlock.nodes[0]=redis://127.0.0.1:7101",
			"redlock.nodes[1]=redis://127.0.0.1:7102", "redlock.nodes[2]=redis://127.0.0.1:7103" };

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RedlockAutoConfiguration.class, RedlockMetricsAutoConfiguration.class))
		.withPropertyValues(THREE_NODES);

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

	@Test
	void startsWithoutMicrometerOnTheClasspath() {
		this.runner.withClassLoader(new FilteredClassLoader("io.micrometer"))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(Redlock.class)
				.doesNotHaveBean(RedlockMetricsListener.class)
				.doesNotHaveBean(RedlockHeldLeasesMeterBinder.class));
	}

	@Test
	void startsWithoutMeterRegistryOnTheClasspath() {
		this.runner.withClassLoader(new FilteredClassLoader(MeterRegistry.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(Redlock.class)
				.doesNotHaveBean(RedlockMetricsListener.class)
				.doesNotHaveBean(RedlockHeldLeasesMeterBinder.class));
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

	@Test
	void backsOffForEveryBeanTheApplicationDefines() {
		Method[] beans = Arrays.stream(RedlockMetricsAutoConfiguration.class.getDeclaredMethods())
			.filter((method) -> method.isAnnotationPresent(Bean.class))
			.toArray(Method[]::new);
		assertThat(beans).hasSize(2)
			.allSatisfy((method) -> assertThat(method.isAnnotationPresent(ConditionalOnMissingBean.class))
				.as("@ConditionalOnMissingBean on %s", method.getName())
				.isTrue());
	}

	@Test
	void autoConfigurationIsRegistered() {
		assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()).getCandidates())
			.contains(RedlockMetricsAutoConfiguration.class.getName());
	}

}
