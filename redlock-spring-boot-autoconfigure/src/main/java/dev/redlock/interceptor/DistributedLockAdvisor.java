package dev.redlock.interceptor;

import java.lang.reflect.Method;

import org.aopalliance.aop.Advice;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.context.aot.AbstractAotProcessor;
import org.springframework.core.annotation.AnnotationUtils;

import dev.redlock.annotation.DistributedLock;

/**
 * Applies a {@link DistributedLockInterceptor} to every method that carries
 * {@link dev.redlock.annotation.DistributedLock @DistributedLock}. Matching resolves and
 * checks the attributes, so invalid ones fail when the bean is created; during
 * ahead-of-time processing it only looks for the annotation.
 */
public final class DistributedLockAdvisor extends AbstractPointcutAdvisor {

	private static final long serialVersionUID = 1L;

	private final transient DistributedLockInterceptor interceptor;

	private final transient Pointcut pointcut;

	/**
	 * Creates the advisor.
	 * @param interceptor the interceptor to apply
	 * @param attributeSource tells which methods are annotated
	 * @param order the advisor's order; lower runs further outside
	 */
	public DistributedLockAdvisor(DistributedLockInterceptor interceptor, LockAttributeSource attributeSource,
			int order) {
		this.interceptor = interceptor;
		StaticMethodMatcherPointcut pointcut = new StaticMethodMatcherPointcut() {
			@Override
			public boolean matches(Method method, @Nullable Class<?> targetClass) {
				if (Boolean.getBoolean(AbstractAotProcessor.AOT_PROCESSING)) {
					// ahead of time only which methods are locked is decided: their
					// attributes may name properties given only at runtime, and are
					// resolved and checked when the application starts
					return attributeSource.isAnnotated(method, targetClass);
				}
				return attributeSource.find(method, targetClass) != null;
			}
		};
		// skip classes that cannot carry the annotation (java.*, most of Spring) without
		// looking at their methods
		pointcut.setClassFilter((type) -> AnnotationUtils.isCandidateClass(type, DistributedLock.class));
		this.pointcut = pointcut;
		setOrder(order);
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

	@Override
	public Advice getAdvice() {
		return this.interceptor;
	}

}
