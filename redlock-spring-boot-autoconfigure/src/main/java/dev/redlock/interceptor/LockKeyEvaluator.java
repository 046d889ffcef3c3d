package dev.redlock.interceptor;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;

/**
 * Evaluates the key expression of a {@code @DistributedLock} call into the resource to lock.
 */
final class LockKeyEvaluator {

	private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

	private final @Nullable BeanFactoryResolver beanResolver;

	LockKeyEvaluator(@Nullable BeanFactory beanFactory) {
		this.beanResolver = (beanFactory != null) ? new BeanFactoryResolver(beanFactory) : null;
	}

	/**
	 * Returns the resource for one call: the lock name when there is no key expression, else the expression's value.
	 * @throws IllegalArgumentException if the expression fails or yields null or an empty string
	 */
	String resource(LockAttributes attributes, Object[] args, Object target, Class<?> targetClass) {
		Expression key = attributes.key();
		if (key == null) {
			return attributes.name();
		}
		LockExpressionRoot root = new LockExpressionRoot(attributes.method(), args, target, targetClass);
		MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(root, attributes.method(), args,
				this.parameterNames);
		if (this.beanResolver != null) {
			context.setBeanResolver(this.beanResolver);
		}
		Object value;
		try {
			value = key.getValue(context);
		}
		catch (EvaluationException ex) {
			throw new IllegalArgumentException(message(attributes, "could not be evaluated: " + ex.getMessage()), ex);
		}
		String resource = (value != null) ? value.toString() : null;
		if (resource == null || resource.isEmpty()) {
			throw new IllegalArgumentException(message(attributes, "evaluated to " + ((value == null) ? "null" : "an empty string")
					+ "; a lock needs a non-empty key"));
		}
		return resource;
	}

	private static String message(LockAttributes attributes, String problem) {
		return "@DistributedLock on " + attributes.description() + ": attribute 'key' = \"" + attributes.keySource()
				+ "\" " + problem;
	}

}
