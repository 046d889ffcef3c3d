package dev.redlock.interceptor;

import java.util.List;

import reactor.core.publisher.Mono;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

import dev.redlock.core.Lease;

/**
 * The locks of a reactive {@link dev.redlock.annotation.DistributedLock @DistributedLock}
 * method, for the publisher it returns: a subscription runs on other threads than the
 * method, so {@link LockContext}'s thread-bound view is empty there; the leases travel in
 * the subscription's Reactor {@link Context} instead.
 *
 * <pre class="code">
 * &#64;DistributedLock(key = "'stock:' + #sku", ttl = "10s", fencing = true)
 * public Mono&lt;Void&gt; restock(String sku, int count) {
 *     return ReactiveLockContext.fencingToken()
 *         .flatMap((token) -&gt; this.warehouse.write(sku, count, token));
 * }
 * </pre>
 *
 * Needs Reactor on the classpath, as reactive methods do.
 */
public final class ReactiveLockContext {

	/** The context key of the leases, innermost call's first. */
	private static final String LEASES = ReactiveLockContext.class.getName() + ".leases";

	private ReactiveLockContext() {
	}

	/**
	 * Emits the lease of the {@code @DistributedLock} method whose publisher is being
	 * subscribed to (the first of its leases, in canonical order, for a call with several
	 * keys).
	 * @return the lease, or empty outside such a subscription
	 */
	public static Mono<Lease> currentLease() {
		return Mono.deferContextual((context) -> Mono.justOrEmpty(leases(context).stream().findFirst()));
	}

	/**
	 * Emits the fencing token of the {@code @DistributedLock(fencing = true)} method
	 * whose publisher is being subscribed to.
	 * @return the token, or empty outside such a subscription or for a lock without one
	 */
	public static Mono<Long> fencingToken() {
		return currentLease().flatMap((lease) -> lease.fencingToken().isPresent()
				? Mono.just(lease.fencingToken().getAsLong()) : Mono.empty());
	}

	/** The context a locked subscription runs with. */
	static Context with(Context context, List<Lease> leases) {
		return context.put(LEASES, List.copyOf(leases));
	}

	@SuppressWarnings("unchecked")
	private static List<Lease> leases(ContextView context) {
		return context.<List<Lease>>getOrDefault(LEASES, List.of());
	}

}
