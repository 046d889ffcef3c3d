package dev.redlock.interceptor;

import java.lang.reflect.Method;
import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.expression.Expression;

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
 */
public record LockAttributes(String name, @Nullable Expression key, String keySource, @Nullable Duration ttl,
		@Nullable Duration waitTime, Method method, String description) {

}
