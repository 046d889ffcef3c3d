package dev.redlock.autoconfigure.endpoint;

import java.util.Set;

import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Configuration properties of the {@code redlock} endpoint, with the meaning of those of
 * Boot's {@code env} and {@code configprops} endpoints.
 *
 * @param showValues When to show the resources of held leases (the evaluated lock keys,
 * which may carry personal data) instead of masking them. Lock names are always shown.
 * @param roles Roles used to determine whether a user is authorized to be shown the
 * resources. When empty, all authenticated users are authorized.
 */
@ConfigurationProperties("management.endpoint.redlock")
public record RedlockEndpointProperties(@DefaultValue("never") Show showValues, @DefaultValue Set<String> roles) {
}
