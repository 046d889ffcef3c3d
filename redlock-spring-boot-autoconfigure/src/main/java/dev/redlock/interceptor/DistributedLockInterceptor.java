package dev.redlock.interceptor;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;

import dev.redlock.core.Lease;
import dev.redlock.core.Redlock;
import dev.redlock.core.ReleaseOutcome;

/**
 * Runs a {@link dev.redlock.annotation.DistributedLock @DistributedLock} method under its lock: evaluates the key,
 * acquires the lock (or throws {@link dev.redlock.core.LockNotAcquiredException} without running the method), runs
 * the method and releases the lock in one {@code try/finally}. A {@link LockObserver} can observe each call (for
 * tracing); it is told about the acquisition, the release and the end of the call, and whatever it throws is logged
 * and ignored.
 */
public final class DistributedLockInterceptor implements MethodInterceptor {

	private static final Logger logger = LoggerFactory.getLogger(DistributedLockInterceptor.class);

	private final Supplier<Redlock> redlock;

	private final LockAttributeSource attributeSource;

	private final LockKeyEvaluator keyEvaluator;

	private final Supplier<LockObserver> observer;

	/**
	 * Creates an interceptor that observes nothing.
	 * @param redlock supplies the lock client; asked on the first call, not at construction
	 * @param attributeSource resolves the annotation of each method
	 * @param beanFactory resolves {@code @bean} references in key expressions, or {@code null}
	 */
	public DistributedLockInterceptor(Supplier<Redlock> redlock, LockAttributeSource attributeSource,
			@Nullable BeanFactory beanFactory) {
		this(redlock, attributeSource, beanFactory, () -> LockObserver.NONE);
	}

	/**
	 * Creates an interceptor.
	 * @param redlock supplies the lock client; asked on each call, not at construction
	 * @param attributeSource resolves the annotation of each method
	 * @param beanFactory resolves {@code @bean} references in key expressions, or {@code null}
	 * @param observer supplies the observer of each call ({@link LockObserver#NONE} for none); asked on each call,
	 * not at construction
	 */
	public DistributedLockInterceptor(Supplier<Redlock> redlock, LockAttributeSource attributeSource,
			@Nullable BeanFactory beanFactory, Supplier<LockObserver> observer) {
		this.redlock = redlock;
		this.attributeSource = attributeSource;
		this.keyEvaluator = new LockKeyEvaluator(beanFactory);
		this.observer = observer;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : null;
		Method method = invocation.getMethod();
		LockAttributes attributes = this.attributeSource.find(method, targetClass);
		if (attributes == null || target == null) {
			return invocation.proceed();
		}
		String resource = this.keyEvaluator.resource(attributes, invocation.getArguments(), target, targetClass);
		Redlock redlock = this.redlock.get();
		Duration ttl = (attributes.ttl() != null) ? attributes.ttl() : redlock.settings().defaultTtl();
		Duration waitTime = (attributes.waitTime() != null) ? attributes.waitTime()
				: redlock.settings().defaultWaitTime();
		LockObservation observation = observe(attributes, resource);
		Lease lease = null;
		Throwable failure = null;
		try {
			lease = redlock.acquire(attributes.name(), resource, ttl, waitTime);
			observation.acquired(lease);
			return invocation.proceed();
		}
		catch (Throwable ex) {
			failure = ex;
			throw ex;
		}
		finally {
			if (lease != null) {
				release(lease, attributes, observation);
			}
			else if (failure != null) {
				observation.notAcquired(failure);
			}
			observation.finished(failure);
		}
	}

	private LockObservation observe(LockAttributes attributes, String resource) {
		try {
			LockObserver observer = this.observer.get();
			if (observer == LockObserver.NONE) {
				return LockObservation.NONE;
			}
			return new GuardedLockObservation(observer.start(attributes, resource));
		}
		catch (RuntimeException ex) {
			logger.warn("Could not start observing lock '{}' for {}; the call goes on unobserved", attributes.name(),
					attributes.description(), ex);
			return LockObservation.NONE;
		}
	}

	private static void release(Lease lease, LockAttributes attributes, LockObservation observation) {
		observation.releasing();
		ReleaseOutcome outcome;
		try {
			outcome = lease.release();
		}
		catch (RuntimeException ex) {
			observation.releaseFailed(ex);
			logger.warn("Releasing lock '{}' after {} failed; it expires at the end of its TTL", attributes.name(),
					attributes.description(), ex);
			return;
		}
		observation.released(outcome);
		if (outcome == ReleaseOutcome.EXPIRED) {
			logger.warn("Lock '{}' had expired before {} returned ({} ms held, TTL {} ms): another caller may have run "
					+ "at the same time; raise the ttl", attributes.name(), attributes.description(),
					lease.heldFor().toMillis(), lease.ttl().toMillis());
		}
		else if (outcome == ReleaseOutcome.UNKNOWN) {
			logger.warn("Lock '{}' could not be confirmed released after {}: too few nodes answered; it expires at the "
					+ "end of its TTL", attributes.name(), attributes.description());
		}
	}

}
