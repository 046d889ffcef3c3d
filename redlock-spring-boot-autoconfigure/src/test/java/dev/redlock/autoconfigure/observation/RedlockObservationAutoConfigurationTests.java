package dev.redlock.autoconfigure.observation;

import java.lang.reflect.Method;
import java.util.Arrays;

import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
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
import dev.redlock.interceptor.LockObserver;
import dev.redlock.observation.ObservationLockObserver;

import static org.assertj.core.api.Assertions.assertThat;

class RedlockObservationAutoConfigurationTests {

	private static final String[] THREE_NODES = { "redlock.nodes[0]=redis://127.0.0.1:7101",
			"redlock.nodes[1]=redis://127.0.0.1:7102", "redlock.nodes[2]=redis://127.0.0.1:7103" };

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(RedlockAutoConfiguration.class, RedlockObservationAutoConfiguration.class))
		.withPropertyValues(THREE_NODES);

	@Test
	void registersTheObserverWhenThereIsAnObservationRegistry() {
		this.runner.withBean(ObservationRegistry.class, TestObservationRegistry::create)
			.run((context) -> assertThat(context).hasSingleBean(ObservationLockObserver.class)
				.hasSingleBean(LockObserver.class));
	}

	@Test
	void registersNothingWithoutAnObservationRegistryBean() {
		this.runner
			.run((context) -> assertThat(context).hasSingleBean(Redlock.class).doesNotHaveBean(LockObserver.class));
	}

	@Test
	void startsWithoutMicrometerOnTheClasspath() {
		this.runner.withClassLoader(new FilteredClassLoader("io.micrometer"))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(Redlock.class)
				.doesNotHaveBean(LockObserver.class));
	}

	@Test
	void backsOffWhenTheApplicationDefinesAnObserver() {
		this.runner.withBean(ObservationRegistry.class, TestObservationRegistry::create)
			.withBean("myObserver", LockObserver.class, () -> LockObserver.NONE)
			.run((context) -> assertThat(context).hasSingleBean(LockObserver.class)
				.hasBean("myObserver")
				.doesNotHaveBean(ObservationLockObserver.class));
	}

	@Test
	void disabledSwitchTurnsObservationsOff() {
		this.runner.withBean(ObservationRegistry.class, TestObservationRegistry::create)
			.withPropertyValues("redlock.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(LockObserver.class));
	}

	@Test
	void backsOffForEveryBeanTheApplicationDefines() {
		Method[] beans = Arrays.stream(RedlockObservationAutoConfiguration.class.getDeclaredMethods())
			.filter((method) -> method.isAnnotationPresent(Bean.class))
			.toArray(Method[]::new);
		assertThat(beans).hasSize(1)
			.allSatisfy((method) -> assertThat(method.isAnnotationPresent(ConditionalOnMissingBean.class))
				.as("@ConditionalOnMissingBean on %s", method.getName())
				.isTrue());
	}

	@Test
	void autoConfigurationIsRegistered() {
		assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()).getCandidates())
			.contains(RedlockObservationAutoConfiguration.class.getName());
	}

}
