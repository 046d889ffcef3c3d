package dev.redlock.autoconfigure.health;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

import dev.redlock.autoconfigure.RedlockAutoConfiguration;
import dev.redlock.core.Redlock;
import dev.redlock.health.RedlockHealthIndicator;

/**
 * Auto-configuration of the {@code redlock} health contributor
 * ({@link RedlockHealthIndicator}) when Spring Boot's health support is on the classpath
 * and a {@link Redlock} bean exists. {@code management.health.redlock.enabled=false}
 * turns it off; a bean named {@code redlockHealthIndicator} replaces it.
 */
@AutoConfiguration(after = RedlockAutoConfiguration.class)
@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnBean(Redlock.class)
public final class RedlockHealthContributorAutoConfiguration {

	// on the method rather than the class: its condition class is loaded only once the
	// class condition above has
	// found Spring Boot's health support, also where no auto-configuration metadata
	// filters imports first
	@Bean
	@ConditionalOnEnabledHealthIndicator("redlock")
	@ConditionalOnMissingBean(name = "redlockHealthIndicator")
	RedlockHealthIndicator redlockHealthIndicator(Redlock redlock) {
		return new RedlockHealthIndicator(redlock);
	}

}
