package dev.redlock.autoconfigure.endpoint;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

import dev.redlock.autoconfigure.RedlockAutoConfiguration;
import dev.redlock.core.Redlock;
import dev.redlock.endpoint.RedlockEndpoint;
import dev.redlock.endpoint.RedlockEndpointWebExtension;
import dev.redlock.endpoint.RedlockNodesSanitizingFunction;

/**
 * Auto-configuration of Redlock's Actuator support when Actuator is on the classpath: the
 * {@code redlock} endpoint ({@link RedlockEndpoint}, when a {@link Redlock} bean exists
 * and the endpoint is available, e.g. with
 * {@code management.endpoints.web.exposure.include=redlock}), and a
 * {@link SanitizingFunction} that keeps the passwords of {@code redlock.nodes} out of the
 * {@code env} and {@code configprops} endpoints. The endpoint masks the leases' resources
 * unless {@code management.endpoint.redlock.show-values} says otherwise
 * ({@link RedlockEndpointProperties}); over HTTP, {@link RedlockEndpointWebExtension}
 * applies it to the caller.
 */
@AutoConfiguration(after = RedlockAutoConfiguration.class)
@ConditionalOnClass({ Endpoint.class, SanitizingFunction.class, ConditionalOnAvailableEndpoint.class })
@EnableConfigurationProperties(RedlockEndpointProperties.class)
public final class RedlockEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(Redlock.class)
	@ConditionalOnAvailableEndpoint(RedlockEndpoint.class)
	RedlockEndpoint redlockEndpoint(Redlock redlock, RedlockEndpointProperties properties) {
		return new RedlockEndpoint(redlock, properties.showValues());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(RedlockEndpoint.class)
	@ConditionalOnAvailableEndpoint(exposure = EndpointExposure.WEB)
	RedlockEndpointWebExtension redlockEndpointWebExtension(RedlockEndpoint redlockEndpoint,
			RedlockEndpointProperties properties) {
		return new RedlockEndpointWebExtension(redlockEndpoint, properties.showValues(), properties.roles());
	}

	@Bean
	@ConditionalOnMissingBean
	RedlockNodesSanitizingFunction redlockNodesSanitizingFunction() {
		return new RedlockNodesSanitizingFunction();
	}

}
