package dev.redlock.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method only while holding a Redlock on a quorum of the configured Redis nodes. Two calls with
 * the same key never run at the same time, in this process or any other that uses the same nodes.
 *
 * <pre>{@code
 * @DistributedLock(key = "'stock:' + #sku", ttl = "10s", waitTime = "2s")
 * public void buy(String sku) { ... }
 * }</pre>
 *
 * <p>If the lock cannot be acquired within {@link #waitTime()}, the method is not run and
 * {@link dev.redlock.core.LockNotAcquiredException} is thrown. The lock is released when the method returns or
 * throws. Mutual exclusion is guaranteed only while the lock is valid: keep {@link #ttl()} well above the method's
 * running time, or let the lease renew itself while the method runs ({@link #autoRenew()}). A method that returns
 * after its lease was lost is logged and counted, and can be made to fail ({@link #onLeaseLost()}). Inside the
 * method, {@link dev.redlock.interceptor.LockContext#currentLease()} gives the lease.
 *
 * <p>Attributes are checked once per method, when the bean is proxied: an unparsable key expression or duration
 * fails the application's startup with a message naming the method and the attribute.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface DistributedLock {

	/**
	 * SpEL expression for the resource to lock, evaluated on every call. Method arguments are available by name
	 * ({@code #orderId}, needs {@code -parameters}) and position ({@code #p0}, {@code #a0}); {@code #root.methodName},
	 * {@code #root.method}, {@code #root.target}, {@code #root.targetClass} and {@code #root.args} describe the call;
	 * {@code @beanName} refers to a bean. Argument values are data, never evaluated as expressions. Empty means the
	 * lock {@link #name()}: one lock for every call of the method. An expression that yields {@code null} or an
	 * empty string fails the call before any lock is taken.
	 * @return the key expression, e.g. {@code "'order:' + #orderId"}
	 */
	String key() default "";

	/**
	 * Name of the lock, used in logs and metrics (never the evaluated key, which can take unbounded values) and as
	 * the resource when {@link #key()} is empty.
	 * @return the name; empty means {@code SimpleClassName.methodName}
	 */
	String name() default "";

	/**
	 * How long the lock lives on the nodes if it is not released: a duration such as {@code 500ms}, {@code 10s} or
	 * {@code PT1M}, or a {@code ${…}} placeholder resolving to one.
	 * @return the time-to-live; empty means {@code redlock.default-ttl}
	 */
	String ttl() default "";

	/**
	 * How long to keep trying when the lock is held elsewhere, as a duration or placeholder. {@code 0s} makes a
	 * single attempt.
	 * @return the wait time; empty means {@code redlock.default-wait-time}
	 */
	String waitTime() default "";

	/**
	 * Whether the lease is renewed while the method runs: extended by its TTL a third of the TTL after each
	 * (re)validation, from the lock client's one renewal thread, until the method returns or throws, or
	 * {@link #maxHold()} is reached. A renewal that fails marks the lease lost at once.
	 * @return {@link Renewal#DEFAULT} to follow {@code redlock.auto-renew}
	 */
	Renewal autoRenew() default Renewal.DEFAULT;

	/**
	 * Longest time a renewed lease is kept alive, counted from its acquisition, as a duration or placeholder; the
	 * lease then runs out at most one TTL later. Only meaningful with renewal on.
	 * @return the bound; empty means {@code redlock.max-hold}
	 */
	String maxHold() default "";

	/**
	 * What the call does when the method returns after its lease was lost.
	 * @return {@link LeaseLostAction#LOG} by default
	 */
	LeaseLostAction onLeaseLost() default LeaseLostAction.LOG;

}
