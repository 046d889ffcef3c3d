package dev.redlock.autoconfigure.shedlock;

import net.javacrumbs.shedlock.core.LockProvider;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import dev.redlock.autoconfigure.RedlockAutoConfiguration;
import dev.redlock.core.Redlock;
import dev.redlock.shedlock.RedlockLockProvider;

/**
 * Auto-configuration of a ShedLock {@link LockProvider} on Redlock
 * ({@link RedlockLockProvider}) when ShedLock is on the classpath, a {@link Redlock} bean
 * exists and the application defines no {@code LockProvider} of its own.
 */
@AutoConfiguration(after = RedlockAutoConfiguration.class)
@ConditionalOnClass(LockProvider.class)
@ConditionalOnBean(Redlock.class)
public final class RedlockShedLockAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(LockProvider.class)
	RedlockLockProvider redlockLockProvider(Redlock redlock) {
		return new RedlockLockProvider(redlock);
	}

}
