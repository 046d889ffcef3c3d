package dev.redlock.interceptor;

import java.lang.reflect.Method;
import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.expression.Expression;

import dev.redlock.annotation.LeaseLostAction;

/**
 * The resolved attributes of one {@code @DistributedLock} method: placeholders resolved, durations parsed and the key
 * expression parsed, once.
 *
 * @param name lock name, for logs and metrics
 * @param key parsed key expression, or {@code null} to lock the name itself
 * @param keySource the key expression as written, for error messages
 * @param ttl time-to-live, or {@code null} for the configured default
 * @param waitTime wait time, or {@code null} for the configured default
 * @param method the most specific method, whose parameter names the expression uses
 * @param description the method as {@code SimpleClassName.method(ParamType, …)}, for messages
 * @param autoRenew whether to renew the lease while the method runs, or {@code null} for the configured default
 * @param maxHold longest time a renewed lease is kept alive, or {@code null} for the configured default
 * @param onLeaseLost what to do when the method returns after its lease was lost
 */
public record LockAttributes(String name, @Nullable Expression key, String keySource, @Nullable Duration ttl,
		@Nullable Duration waitTime, Method method, String description, @Nullable Boolean autoRenew,
		@Nullable Duration maxHold, LeaseLostAction onLeaseLost) {

	/**
	 * Creates attributes with renewal as configured and lost leases logged.
	 * @param name lock name
	 * @param key parsed key expression, or {@code null}
	 * @param keySource the key expression as written
	 * @param ttl time-to-live, or {@code null}
	 * @param waitTime wait time, or {@code null}
	 * @param method the most specific method
	 * @param description the method, for messages
	 */
	public LockAttributes(String name, @Nullable Expression key, String keySource, @Nullable Duration ttl,
			@Nullable Duration waitTime, Method method, String description) {
		this(name, key, keySource, ttl, waitTime, method, description, null, null, LeaseLostAction.LOG);
	}

}
