package dev.redlock.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method only while holding a Redlock on a quorum of the configured
 * Redis nodes. While its lease is valid (its TTL, less the time taken to acquire it and
 * the clock drift allowance, or for as long as it is renewed), no other call with the
 * same key runs, in this process or any other that uses the same nodes; a holder that
 * stalls past its lease may overlap with the next one (see fencing tokens).
 *
 * <pre class="code">
 * &#64;DistributedLock(key = "'stock:' + #sku", ttl = "10s", waitTime = "2s")
 * public void buy(String sku) { ... }
 * </pre>
 *
 * <p>
 * If the lock cannot be acquired within {@link #waitTime()}, the method is not run and
 * {@link dev.redlock.core.LockNotAcquiredException} is thrown, unless {@link #onLocked()}
 * says to skip the call or to run a fallback. The lock is released when the method
 * returns or throws; for a method returning a {@code CompletionStage} or
 * {@code CompletableFuture}, when that completes, normally, exceptionally or by
 * cancellation; a {@code Mono} or {@code Flux} (with Reactor on the classpath) is locked
 * per subscription. A call made while the same logical call (the same thread, or a task
 * given {@link dev.redlock.interceptor.LockContext#wrap(Runnable) the context}) already
 * holds the same resource joins that lock instead of waiting for itself; only the
 * outermost call releases it. Mutual exclusion is guaranteed only while the lock is
 * valid: keep {@link #ttl()} well above the method's running time, or let the lease renew
 * itself while the method runs ({@link #autoRenew()}). A method that returns after its
 * lease was lost is logged and counted, and can be made to fail ({@link #onLeaseLost()}).
 * Inside the method, {@link dev.redlock.interceptor.LockContext#currentLease()} gives the
 * lease.
 *
 * <p>
 * Attributes are checked once per method, when the bean is proxied: an unparsable key
 * expression or duration fails the application's startup with a message naming the method
 * and the attribute.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface DistributedLock {

	/**
	 * SpEL expression for the resource to lock, evaluated on every call. Method arguments
	 * are available by name ({@code #orderId}, needs {@code -parameters}) and position
	 * ({@code #p0}, {@code #a0}); {@code #root.methodName}, {@code #root.method},
	 * {@code #root.target}, {@code #root.targetClass} and {@code #root.args} describe the
	 * call; {@code @beanName} refers to a bean. Argument values are data, never evaluated
	 * as expressions. Empty means the lock {@link #name()}: one lock for every call of
	 * the method. An expression that yields {@code null} or an empty string fails the
	 * call before any lock is taken.
	 * @return the key expression, e.g. {@code "'order:' + #orderId"}
	 */
	String key() default "";

	/**
	 * SpEL expressions for several resources to lock together, all or none, like
	 * {@link #key()} each. They are acquired one after the other in a canonical order
	 * (sorted, duplicates dropped), so two calls naming the same resources in another
	 * order, such as transfers between two accounts in both directions, cannot deadlock;
	 * all within one {@link #waitTime()}. If one cannot be had, those already acquired
	 * are released. Not together with {@link #key()}.
	 * @return the key expressions, e.g. {@code {"'acct:' + #from", "'acct:' + #to"}}
	 */
	String[] keys() default {};

	/**
	 * SpEL condition, with the same variables as {@link #key()}: the lock is taken only
	 * when it is {@code true}; otherwise the method runs without it.
	 * @return the condition, e.g. {@code "#amount > 1000"}; empty means always
	 */
	String condition() default "";

	/**
	 * Name of the lock, used in logs and metrics (never the evaluated key, which can take
	 * unbounded values) and as the resource when {@link #key()} is empty.
	 * @return the name; empty means {@code SimpleClassName.methodName}
	 */
	String name() default "";

	/**
	 * How long the lock lives on the nodes if it is not released: a duration such as
	 * {@code 500ms}, {@code 10s} or {@code PT1M}, or a {@code ${…}} placeholder resolving
	 * to one.
	 * @return the time-to-live; empty means {@code redlock.default-ttl}
	 */
	String ttl() default "";

	/**
	 * How long to keep trying when the lock is held elsewhere, as a duration or
	 * placeholder. {@code 0s} makes a single attempt.
	 * @return the wait time; empty means {@code redlock.default-wait-time}
	 */
	String waitTime() default "";

	/**
	 * Whether the lease is renewed while the method runs: extended by its TTL a third of
	 * the TTL after each (re)validation, from the lock client's one renewal thread, until
	 * the method returns or throws, or {@link #maxHold()} is reached. A renewal that
	 * fails marks the lease lost at once.
	 * @return {@link Renewal#DEFAULT} to follow {@code redlock.auto-renew}
	 */
	Renewal autoRenew() default Renewal.DEFAULT;

	/**
	 * Longest time a renewed lease is kept alive, counted from its acquisition, as a
	 * duration or placeholder; the lease then runs out at most one TTL later. Only
	 * meaningful with renewal on.
	 * @return the bound; empty means {@code redlock.max-hold}
	 */
	String maxHold() default "";

	/**
	 * What the call does when the method returns after its lease was lost.
	 * @return {@link OnLeaseLost#LOG} by default
	 */
	OnLeaseLost onLeaseLost() default OnLeaseLost.LOG;

	/**
	 * What the call does when the lock cannot be acquired within the wait time.
	 * @return {@link OnLocked#THROW} by default
	 */
	OnLocked onLocked() default OnLocked.THROW;

	/**
	 * Name of the method to run instead when the lock cannot be acquired, with
	 * {@link #onLocked()} {@link OnLocked#FALLBACK}: a method of the same class with the
	 * same parameter types, whose return type the annotated method's return type can
	 * hold.
	 * @return the fallback method's name
	 */
	String fallback() default "";

	/**
	 * Whether the lock comes with a fencing token, a number that grows with every fenced
	 * acquisition of the resource across all holders: read it in the method with
	 * {@link dev.redlock.interceptor.LockContext#fencingToken()} and pass it to the store
	 * the lock protects, which refuses tokens lower than the highest it has seen. Costs a
	 * script on the nodes per acquisition (and one more round when their counters are out
	 * of step), and needs nodes that keep their data (see
	 * {@link dev.redlock.core.Lease#fencingToken()}). A call that joins a lock already
	 * held gets that lock's token, if it has one.
	 * @return {@code true} for a token
	 */
	boolean fencing() default false;

	/**
	 * Least time the lock stays taken after it was acquired, as a duration or
	 * placeholder, even if the method returns sooner: the key is then left to expire at
	 * that time instead of being deleted. For scheduled jobs, so that an instance whose
	 * schedule or clock is a little late finds the lock still taken and does not run the
	 * same tick again. At most the {@link #ttl()}.
	 * @return the minimum hold; empty means none (released when the method returns)
	 */
	String minHold() default "";

}
