package dev.redlock.autoconfigure.endpoint;

import java.util.HashSet;
import java.util.Set;

import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the {@code redlock} endpoint, with the meaning of those of
 * Boot's {@code env} and {@code configprops} endpoints.
 */
@ConfigurationProperties("management.endpoint.redlock")
public class RedlockEndpointProperties {

	/**
	 * When to show the resources of held leases (the evaluated lock keys, which may carry
	 * personal data) instead of masking them. Lock names are always shown.
	 */
	private Show showValues = Show.NEVER;

	/**
	 * Roles used to determine whether a user is authorized to be shown the resources.
	 * When empty, all authenticated users are authorized.
	 */
	private final Set<String> roles = new HashSet<>();

	public Show getShowValues() {
		return this.showValues;
	}

	public void setShowValues(Show showValues) {
		this.showValues = showValues;
	}

	public Set<String> getRoles() {
		return this.roles;
	}

}
