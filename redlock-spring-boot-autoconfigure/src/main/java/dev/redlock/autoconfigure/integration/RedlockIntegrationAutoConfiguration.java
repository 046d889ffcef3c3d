package dev.redlock.autoconfigure.integration;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;

import dev.redlock.autoconfigure.RedlockAutoConfiguration;
import dev.redlock.core.Redlock;
import dev.redlock.integration.RedlockLockRegistry;

/**
 * Auto-configuration of a Spring Integration {@link LockRegistry} on Redlock
 * ({@link RedlockLockRegistry}) when Spring Integration is on the classpath, a
 * {@link Redlock} bean exists and the application defines no {@code LockRegistry} of its
 * own.
 */
@AutoConfiguration(after = RedlockAutoConfiguration.class)
@ConditionalOnClass(LockRegistry.class)
@ConditionalOnBean(Redlock.class)
public final class RedlockIntegrationAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(LockRegistry.class)
	RedlockLockRegistry redlockLockRegistry(Redlock redlock) {
		return new RedlockLockRegistry(redlock);
	}

}
