package dev.redlock.autoconfigure.metrics;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import dev.redlock.autoconfigure.RedlockAutoConfiguration;
import dev.redlock.core.Redlock;
import dev.redlock.metrics.RedlockHeldLeasesMeterBinder;
import dev.redlock.metrics.RedlockMetricsListener;

/**
 * Auto-configuration of Redlock's Micrometer meters, active when the application has a
 * {@link MeterRegistry} bean. Runs before {@link RedlockAutoConfiguration} so that the
 * {@link RedlockMetricsListener} is among the listeners the {@link Redlock} is built
 * with.
 */
@AutoConfiguration(before = RedlockAutoConfiguration.class,
		afterName = { "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
				"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration" })
@ConditionalOnClass({ MeterRegistry.class, Redlock.class })
@ConditionalOnBean(MeterRegistry.class)
@ConditionalOnBooleanProperty(name = "redlock.enabled", matchIfMissing = true)
public final class RedlockMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RedlockMetricsListener redlockMetricsListener(MeterRegistry meterRegistry) {
		return new RedlockMetricsListener(meterRegistry);
	}

	@Bean
	@ConditionalOnMissingBean
	RedlockHeldLeasesMeterBinder redlockHeldLeasesMeterBinder(Redlock redlock) {
		return new RedlockHeldLeasesMeterBinder(redlock);
	}

}
