package dev.redlock.autoconfigure.observation;

import io.micrometer.observation.ObservationRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

import dev.redlock.autoconfigure.RedlockAutoConfiguration;
import dev.redlock.autoconfigure.RedlockProperties;
import dev.redlock.interceptor.LockObserver;
import dev.redlock.observation.ObservationLockObserver;

/**
 * Auto-configuration of Micrometer Observations around
 * {@link dev.redlock.annotation.DistributedLock
 *
 * @DistributedLock} methods, active when the application has an
 * {@link ObservationRegistry} bean. The interceptor picks up the {@link LockObserver}
 * bean on each call; without one it observes nothing. The evaluated key is the
 * observation's {@code resource} key value unless
 * {@code redlock.observation.include-resource=false}.
 */
@AutoConfiguration(before = RedlockAutoConfiguration.class,
		afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass({ ObservationRegistry.class, LockObserver.class })
@ConditionalOnBean(ObservationRegistry.class)
@ConditionalOnBooleanProperty(name = "redlock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RedlockProperties.class)
public final class RedlockObservationAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(LockObserver.class)
	ObservationLockObserver redlockLockObserver(ObservationRegistry observationRegistry, RedlockProperties properties) {
		return new ObservationLockObserver(observationRegistry, properties.observation().includeResource());
	}

}
