package dev.redlock.autoconfigure.observation;

import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.redlock.autoconfigure.AutoConfigurationTesting;
import dev.redlock.core.Redlock;
import dev.redlock.interceptor.LockObserver;
import dev.redlock.observation.ObservationLockObserver;

import static org.assertj.core.api.Assertions.assertThat;

class RedlockObservationAutoConfigurationTests {

	private final ApplicationContextRunner runner = AutoConfigurationTesting
		.runnerWithThreeNodes(RedlockObservationAutoConfiguration.class);

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

}
