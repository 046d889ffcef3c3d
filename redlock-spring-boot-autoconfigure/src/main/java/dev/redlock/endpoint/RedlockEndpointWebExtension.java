package dev.redlock.endpoint;

import java.util.Set;

import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

import dev.redlock.endpoint.RedlockEndpoint.RedlockDescriptor;

/**
 * The {@link RedlockEndpoint} over HTTP: shows the leases' resources to whom Boot's
 * {@code env} endpoint would show its values. With {@link Show#WHEN_AUTHORIZED}, that is
 * an authenticated user in one of the roles, or any authenticated user when no role is
 * given.
 */
@EndpointWebExtension(endpoint = RedlockEndpoint.class)
public class RedlockEndpointWebExtension {

	private final RedlockEndpoint delegate;

	private final Show showValues;

	private final Set<String> roles;

	/**
	 * Creates the extension.
	 * @param delegate the endpoint
	 * @param showValues when to show the leases' resources
	 * @param roles the roles that may see them with {@link Show#WHEN_AUTHORIZED}; empty
	 * for any authenticated user
	 */
	public RedlockEndpointWebExtension(RedlockEndpoint delegate, Show showValues, Set<String> roles) {
		this.delegate = delegate;
		this.showValues = showValues;
		this.roles = Set.copyOf(roles);
	}

	/**
	 * Describes the leases, settings and node counters of this instance, with the
	 * resources shown if the caller may see them.
	 * @param securityContext who is asking
	 * @return a snapshot
	 */
	@ReadOperation
	public RedlockDescriptor redlock(SecurityContext securityContext) {
		return this.delegate.redlock(this.showValues.isShown(securityContext, this.roles));
	}

}
