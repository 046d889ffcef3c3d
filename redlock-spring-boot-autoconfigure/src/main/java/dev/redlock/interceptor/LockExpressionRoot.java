package dev.redlock.interceptor;

import java.lang.reflect.Method;

/**
 * The {@code #root} object of a {@code @DistributedLock} key expression.
 */
public final class LockExpressionRoot {

	private final Method method;

	private final Object[] args;

	private final Object target;

	private final Class<?> targetClass;

	LockExpressionRoot(Method method, Object[] args, Object target, Class<?> targetClass) {
		this.method = method;
		this.args = args;
		this.target = target;
		this.targetClass = targetClass;
	}

	/**
	 * Returns the invoked method.
	 * @return the method ({@code #root.method})
	 */
	public Method getMethod() {
		return this.method;
	}

	/**
	 * Returns the name of the invoked method.
	 * @return the method name ({@code #root.methodName})
	 */
	public String getMethodName() {
		return this.method.getName();
	}

	/**
	 * Returns the call's arguments.
	 * @return the arguments ({@code #root.args})
	 */
	public Object[] getArgs() {
		return this.args;
	}

	/**
	 * Returns the bean the method is invoked on.
	 * @return the target ({@code #root.target})
	 */
	public Object getTarget() {
		return this.target;
	}

	/**
	 * Returns the class of the bean the method is invoked on.
	 * @return the target class ({@code #root.targetClass})
	 */
	public Class<?> getTargetClass() {
		return this.targetClass;
	}

}
