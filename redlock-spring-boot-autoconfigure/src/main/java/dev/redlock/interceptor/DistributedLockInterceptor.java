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

import dev.redlock.annotation.LeaseLostAction;
import dev.redlock.core.Lease;
import dev.redlock.core.LeaseLostException;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockListener.LossReason;
import dev.redlock.core.ReleaseOutcome;

/**
 * Runs a {@link dev.redlock.annotation.DistributedLock @DistributedLock} method under its lock: evaluates the key,
 * acquires the lock (or throws {@link dev.redlock.core.LockNotAcquiredException} without running the method),
 * starts renewing the lease if asked, runs the method with the lease in {@link LockContext}, and releases the lock
 * (which stops renewal) in one {@code try/finally}, whatever the method throws, errors included. A method that
 * returns after its lease was lost is logged at WARN and, with {@link LeaseLostAction#THROW}, fails with
 * {@link LeaseLostException} after the release. A {@link LockObserver} can observe each call (for
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
		boolean renew = (attributes.autoRenew() != null) ? attributes.autoRenew() : redlock.settings().autoRenew();
		Duration maxHold = (attributes.maxHold() != null) ? attributes.maxHold() : redlock.settings().maxHold();
		LockObservation observation = observe(attributes, resource);
		Lease lease = null;
		boolean inContext = false;
		Lease outer = null;
		Throwable failure = null;
		LeaseLostException lost = null;
		Object result;
		try {
			lease = redlock.acquire(attributes.name(), resource, ttl, waitTime);
			observation.acquired(lease);
			if (renew) {
				lease.autoRenew(maxHold);
			}
			outer = LockContext.enter(lease);
			inContext = true;
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			failure = ex;
			throw ex;
		}
		finally {
			if (inContext) {
				LockContext.restore(outer);
			}
			if (lease != null) {
				// the time held up to the release, read only for a lease already lost (the release may find it lost)
				Duration heldFor = lease.isLost() ? lease.heldFor() : null;
				release(lease, attributes, observation);
				lost = lost(lease, heldFor, attributes, failure);
			}
			else if (failure != null) {
				observation.notAcquired(failure);
			}
			observation.finished((failure != null) ? failure : lost);
		}
		if (lost != null) {
			throw lost;
		}
		return result;
	}

	/**
	 * Logs a lease lost before the method returned, and returns the exception to throw for it: {@code null} with
	 * {@link LeaseLostAction#LOG}, or when the method threw (the loss is then added to its exception as suppressed).
	 */
	private static @Nullable LeaseLostException lost(Lease lease, @Nullable Duration heldBeforeRelease,
			LockAttributes attributes, @Nullable Throwable failure) {
		if (!lease.isLost()) {
			return null;
		}
		Duration heldFor = (heldBeforeRelease != null) ? heldBeforeRelease : lease.heldFor();
		String reason = lease.lossReason().map(LossReason::tag).orElse("lost");
		logger.warn("Lock '{}' was lost before {} {} ({}; {} ms held, TTL {} ms): another caller may have run at the "
				+ "same time; raise the ttl or renew the lease", attributes.name(), attributes.description(),
				(failure != null) ? "threw" : "returned", reason, heldFor.toMillis(), lease.ttl().toMillis());
		if (attributes.onLeaseLost() != LeaseLostAction.THROW) {
			return null;
		}
		LeaseLostException exception = new LeaseLostException(lease, attributes.description(), heldFor);
		if (failure != null) {
			failure.addSuppressed(exception);
			return null;
		}
		return exception;
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
		if (outcome == ReleaseOutcome.UNKNOWN) {
			logger.warn("Lock '{}' could not be confirmed released after {}: too few nodes answered; it expires at the "
					+ "end of its TTL", attributes.name(), attributes.description());
		}
	}

}
