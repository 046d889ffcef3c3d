package dev.redlock.autoconfigure.observation;

import io.micrometer.observation.ObservationRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import dev.redlock.autoconfigure.RedlockAutoConfiguration;
import dev.redlock.interceptor.LockObserver;
import dev.redlock.observation.ObservationLockObserver;

/**
 * Auto-configuration of Micrometer Observations around
 * {@link dev.redlock.annotation.DistributedLock
 *
 * @DistributedLock} methods, active when the application has an
 * {@link ObservationRegistry} bean. The interceptor picks up the {@link LockObserver}
 * bean on each call; without one it observes nothing.
 */
@AutoConfiguration(before = RedlockAutoConfiguration.class,
		afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass({ ObservationRegistry.class, LockObserver.class })
@ConditionalOnBean(ObservationRegistry.class)
@ConditionalOnBooleanProperty(name = "redlock.enabled", matchIfMissing = true)
public final class RedlockObservationAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(LockObserver.class)
	ObservationLockObserver redlockLockObserver(ObservationRegistry observationRegistry) {
		return new ObservationLockObserver(observationRegistry);
	}

}
