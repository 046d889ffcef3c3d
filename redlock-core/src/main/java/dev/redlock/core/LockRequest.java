package dev.redlock.core;

import java.time.Duration;
import java.util.Objects;

import dev.redlock.core.internal.LockArguments;

/**
 * What to lock, for how long, under which name, and whether with a fencing token.
 * Immutable: each method returns a new request.
 *
 * <pre>{@code
 * LockRequest request = LockRequest.of("order:" + orderId, Duration.ofSeconds(10)).named("checkout");
 * try (Lease lease = redlock.acquire(request, Duration.ofSeconds(2))) {
 *     // at most one holder of order:<id> at a time while lease.isValid()
 * }
 * }</pre>
 *
 * @param resource the resource to lock, without the key prefix
 * @param ttl how long the lock lives on the nodes unless released or extended
 * @param name the lock's name, for listeners and metrics
 * @param isFenced whether the lease gets a fencing token
 */
public record LockRequest(String resource, Duration ttl, String name, boolean isFenced) {

	/**
	 * Creates a request; {@link #of} and the methods that return a new request are the
	 * usual way.
	 * @throws IllegalArgumentException if the name is null or blank
	 */
	public LockRequest {
		Objects.requireNonNull(resource, "resource");
		Objects.requireNonNull(ttl, "ttl");
		LockArguments.checkName(name);
	}

	/** The name of locks acquired without one. */
	static final String DEFAULT_NAME = "unnamed";

	/**
	 * A request for a lock on a resource, named {@code "unnamed"}, without a fencing
	 * token.
	 * @param resource the resource to lock (the key prefix goes in front of it)
	 * @param ttl how long the lock lives on the nodes unless released or extended
	 * @return the request
	 */
	public static LockRequest of(String resource, Duration ttl) {
		return new LockRequest(resource, ttl, DEFAULT_NAME, false);
	}

	/**
	 * The same request under a lock name, for listeners and metrics.
	 * @param name bounded, such as one per call site (never the resource when resources
	 * are unbounded)
	 * @return a new request
	 * @throws IllegalArgumentException if the name is null or blank
	 */
	public LockRequest named(String name) {
		return new LockRequest(this.resource, this.ttl, name, this.isFenced);
	}

	/**
	 * The same request with a fencing token: a number that grows with every fenced
	 * acquisition of the resource, across all holders, so that the store the lock
	 * protects can refuse a write from an older holder (one that paused past its lease
	 * and does not know it). See {@link Lease#fencingToken()} for how it is made and what
	 * it needs from the nodes.
	 * @return a new request
	 */
	public LockRequest fenced() {
		return new LockRequest(this.resource, this.ttl, this.name, true);
	}

	@Override
	public String toString() {
		return "LockRequest[resource=" + this.resource + ", ttl=" + this.ttl + ", name=" + this.name
				+ (this.isFenced ? ", fenced" : "") + "]";
	}

}
