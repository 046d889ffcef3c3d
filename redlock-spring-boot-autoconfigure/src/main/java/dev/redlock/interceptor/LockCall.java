package dev.redlock.interceptor;

import java.lang.reflect.Method;

/**
 * One call of a {@link dev.redlock.annotation.DistributedLock @DistributedLock} method,
 * as a {@link LockObserver} sees it.
 *
 * @param name the lock's name: bounded, for low-cardinality tags
 * @param method the annotated method
 * @param resource the evaluated key (several joined with {@code ","}): unbounded, and it
 * may carry personal or business data
 */
public record LockCall(String name, Method method, String resource) {
}
