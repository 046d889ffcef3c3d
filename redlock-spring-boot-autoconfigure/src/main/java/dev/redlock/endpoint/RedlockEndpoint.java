package dev.redlock.endpoint;

import java.util.List;

import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

import dev.redlock.core.Lease;
import dev.redlock.core.NodeStatistics;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockSettings;

/**
 * The {@code redlock} Actuator endpoint: the leases this instance holds now, nine of the
 * effective settings, and how each node has answered so far. Node addresses never carry
 * credentials. Expose it over HTTP with
 * {@code management.endpoints.web.exposure.include=redlock} and read it at
 * {@code /actuator/redlock}.
 *
 * <p>
 * A lease's {@code resource} is the evaluated lock key, which may carry personal or
 * business data ({@code acct:alice@example.com}): it is masked ({@value #MASK}) unless
 * values are shown, under the rules of Boot's {@code env} and {@code configprops}
 * endpoints ({@code management.endpoint.redlock.show-values} = {@code never} |
 * {@code when-authorized} | {@code always}, and
 * {@code management.endpoint.redlock.roles}; see {@link RedlockEndpointWebExtension}).
 * Lock names are always shown.
 *
 * <p>
 * Durations are ISO-8601 strings ({@code PT30S}) unless the field name ends in {@code Ms}
 * (a number of milliseconds); instants are ISO-8601 strings in UTC.
 */
@Endpoint(id = "redlock")
public class RedlockEndpoint {

	/** What replaces a value that is not shown. */
	public static final String MASK = "******";

	private final Redlock redlock;

	private final Show showValues;

	/**
	 * Creates the endpoint for a {@link Redlock}, never showing resources.
	 * @param redlock the instance to describe
	 */
	public RedlockEndpoint(Redlock redlock) {
		this(redlock, Show.NEVER);
	}

	/**
	 * Creates the endpoint for a {@link Redlock}.
	 * @param redlock the instance to describe
	 * @param showValues when to show the leases' resources; outside the web (JMX),
	 * {@link Show#WHEN_AUTHORIZED} shows them, as Boot's {@code env} endpoint does
	 */
	public RedlockEndpoint(Redlock redlock, Show showValues) {
		this.redlock = redlock;
		this.showValues = showValues;
	}

	/**
	 * Describes the leases, settings and node counters of this instance.
	 * @return a snapshot
	 */
	@ReadOperation
	public RedlockDescriptor redlock() {
		return redlock(this.showValues.isShown(true));
	}

	/**
	 * Describes the leases, settings and node counters of this instance.
	 * @param showUnsanitized whether to show the leases' resources, else they are
	 * {@value #MASK}
	 * @return a snapshot
	 */
	RedlockDescriptor redlock(boolean showUnsanitized) {
		List<LeaseDescriptor> leases = this.redlock.heldLeases()
			.stream()
			.map((lease) -> LeaseDescriptor.of(lease, showUnsanitized))
			.toList();
		List<NodeStatistics> nodes = this.redlock.nodeStatistics();
		return new RedlockDescriptor(leases, SettingsDescriptor.of(this.redlock), nodes);
	}

	/**
	 * What the endpoint returns.
	 *
	 * @param leases the leases this instance holds now, valid and not released
	 * @param settings the effective settings
	 * @param nodes how each node has answered since the start, in configuration order
	 */
	public record RedlockDescriptor(List<LeaseDescriptor> leases, SettingsDescriptor settings,
			List<NodeStatistics> nodes) implements OperationResponseBody {
	}

	/**
	 * One lease held by this instance.
	 *
	 * @param name the lock's name (the annotation's name, or the name given to
	 * {@code Redlock.acquire})
	 * @param resource the locked resource, without the key prefix; {@value #MASK} unless
	 * values are shown
	 * @param acquiredAt when it was acquired (ISO-8601, UTC)
	 * @param validityRemainingMs how long it remains valid, in milliseconds
	 * @param extensions how many times an extension was attempted
	 * @param ttl its current time-to-live (ISO-8601 duration)
	 */
	public record LeaseDescriptor(String name, String resource, String acquiredAt, long validityRemainingMs,
			int extensions, String ttl) {

		static LeaseDescriptor of(Lease lease, boolean showUnsanitized) {
			return new LeaseDescriptor(lease.name(), showUnsanitized ? lease.resource() : MASK,
					lease.acquiredAt().toString(), lease.remainingValidity().toMillis(), lease.extensionAttempts(),
					lease.ttl().toString());
		}

	}

	/**
	 * Nine of the effective settings: the others (the restart quarantine, the maximum
	 * hold, the pool sizes, ...) are under the {@code redlock} prefix of Actuator's
	 * {@code configprops} endpoint.
	 *
	 * @param nodes node addresses without credentials, in configuration order
	 * @param quorum how many nodes must agree for a lock to be held
	 * @param keyPrefix prefix put in front of every resource name
	 * @param defaultTtl TTL used when a caller gives none (ISO-8601 duration)
	 * @param defaultWaitTime wait time used when a caller gives none (ISO-8601 duration)
	 * @param retryDelay mean delay between two attempts (ISO-8601 duration)
	 * @param nodeTimeout bound on one round trip to the nodes (ISO-8601 duration)
	 * @param clockDriftFactor part of the TTL reserved for clock drift
	 * @param maxExtensions how many times one lease may be extended
	 */
	public record SettingsDescriptor(List<String> nodes, int quorum, String keyPrefix, String defaultTtl,
			String defaultWaitTime, String retryDelay, String nodeTimeout, double clockDriftFactor, int maxExtensions) {

		static SettingsDescriptor of(Redlock redlock) {
			RedlockSettings settings = redlock.settings();
			return new SettingsDescriptor(redlock.nodeAddresses(), redlock.quorum(), settings.keyPrefix(),
					settings.defaultTtl().toString(), settings.defaultWaitTime().toString(),
					settings.retryDelay().toString(), settings.nodeTimeout().toString(), settings.clockDriftFactor(),
					settings.maxExtensions());
		}

	}

}
