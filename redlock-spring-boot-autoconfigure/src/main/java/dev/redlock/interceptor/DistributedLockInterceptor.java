package dev.redlock.interceptor;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;

import dev.redlock.annotation.OnLeaseLost;
import dev.redlock.core.Lease;
import dev.redlock.core.LeaseLostException;
import dev.redlock.core.Redlock;

/**
 * Runs a {@link dev.redlock.annotation.DistributedLock @DistributedLock} method under its
 * lock: checks the condition, evaluates the keys, joins the leases this logical call
 * already holds ({@link LockContext}) and acquires the others in canonical order (or,
 * when one cannot be had, releases those taken and throws, skips or falls back), starts
 * renewing the leases if asked, runs the method with them in {@link LockContext}, and
 * releases the locks it acquired (which stops renewal) whatever the method throws, errors
 * included; for a method returning a {@code CompletionStage}, when that completes. A
 * method that returns after its lease was lost is logged at WARN and, with
 * {@link OnLeaseLost#THROW}, fails with {@link LeaseLostException} after the release. A
 * {@link LockObserver} can observe each call (for tracing); it is told about the
 * acquisition, the release and the end of the call, and whatever it throws is logged and
 * ignored.
 */
public final class DistributedLockInterceptor implements MethodInterceptor {

	private static final Logger logger = LoggerFactory.getLogger(DistributedLockInterceptor.class);

	private final Supplier<Redlock> redlock;

	private final LockAttributeSource attributeSource;

	private final LockKeyEvaluator keyEvaluator;

	private final Supplier<LockObserver> observer;

	/**
	 * Creates an interceptor that observes nothing.
	 * @param redlock supplies the lock client; asked on the first call, not at
	 * construction
	 * @param attributeSource resolves the annotation of each method
	 * @param beanFactory resolves {@code @bean} references in key expressions, or
	 * {@code null}
	 */
	public DistributedLockInterceptor(Supplier<Redlock> redlock, LockAttributeSource attributeSource,
			@Nullable BeanFactory beanFactory) {
		this(redlock, attributeSource, beanFactory, () -> LockObserver.NONE);
	}

	/**
	 * Creates an interceptor.
	 * @param redlock supplies the lock client; asked on each call, not at construction
	 * @param attributeSource resolves the annotation of each method
	 * @param beanFactory resolves {@code @bean} references in key expressions, or
	 * {@code null}
	 * @param observer supplies the observer of each call ({@link LockObserver#NONE} for
	 * none); asked on each call, not at construction
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
		Object[] args = invocation.getArguments();
		if (!this.keyEvaluator.conditionHolds(attributes, args, target, targetClass)) {
			return invocation.proceed();
		}
		List<String> resources = this.keyEvaluator.resources(attributes, args, target, targetClass);
		Redlock redlock = this.redlock.get();
		if (attributes.reactive()) {
			// the method only assembles the work: each subscription locks (no joining:
			// there is no thread to follow)
			return ReactiveLocks.lock(invocation.proceed(), attributes.method().getReturnType(),
					() -> new LockedCall(attributes, redlock, observe(attributes, resources)), resources, target, args);
		}
		List<Lease> joined = null;
		List<String> toAcquire = resources;
		for (String resource : resources) {
			Lease held = LockContext.joinable(redlock, resource);
			if (held != null) {
				if (joined == null) {
					joined = new ArrayList<>(resources.size());
					toAcquire = new ArrayList<>(resources);
				}
				joined.add(held);
				toAcquire.remove(resource);
			}
		}
		if (toAcquire.isEmpty()) {
			// every resource is held by this logical call already: join, and leave the
			// release to its owner
			return proceedHolding(invocation, redlock, joined);
		}
		return new LockedCall(attributes, redlock, observe(attributes, toAcquire)).run(invocation, target, args,
				toAcquire, (joined != null) ? joined : List.of());
	}

	private static @Nullable Object proceedHolding(MethodInvocation invocation, Redlock redlock, List<Lease> leases)
			throws Throwable {
		LockContext.Frame outer = LockContext.enter(redlock, leases);
		try {
			return invocation.proceed();
		}
		finally {
			LockContext.exit(outer);
		}
	}

	private LockObservation observe(LockAttributes attributes, List<String> resources) {
		try {
			LockObserver observer = this.observer.get();
			if (observer == LockObserver.NONE) {
				return LockObservation.NONE;
			}
			String resource = (resources.size() == 1) ? resources.get(0) : String.join(",", resources);
			return new GuardedLockObservation(
					observer.start(new LockCall(attributes.name(), attributes.method(), resource)));
		}
		catch (RuntimeException ex) {
			logger.warn("Could not start observing lock '{}' for {}; the call goes on unobserved", attributes.name(),
					attributes.description(), ex);
			return LockObservation.NONE;
		}
	}

}
