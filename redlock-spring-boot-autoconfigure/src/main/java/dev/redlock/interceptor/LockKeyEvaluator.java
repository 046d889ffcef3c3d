package dev.redlock.interceptor;

import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.ConstructorResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.IndexAccessor;
import org.springframework.expression.MethodResolver;
import org.springframework.expression.OperatorOverloader;
import org.springframework.expression.PropertyAccessor;
import org.springframework.expression.TypeComparator;
import org.springframework.expression.TypeConverter;
import org.springframework.expression.TypeLocator;
import org.springframework.expression.TypedValue;
import org.springframework.expression.spel.support.StandardEvaluationContext;

import dev.redlock.interceptor.IdentityRefusingConverter.IdentityText;

/**
 * Evaluates the key expression of a {@code @DistributedLock} call into the resource to
 * lock.
 */
final class LockKeyEvaluator {

	private static final String[] NO_NAMES = {};

	private final ParameterNameDiscoverer parameterNameDiscoverer = new DefaultParameterNameDiscoverer();

	/**
	 * Parameter names per method, discovered once: discovery reflects on every call
	 * otherwise.
	 */
	private final Map<Method, String[]> parameterNames = new ConcurrentHashMap<>();

	/**
	 * Per method with one key: whether that key names one of its arguments
	 * ({@code #orderId}, {@code #p0}). Such a key is read straight from the arguments:
	 * SpEL reads the same value, but builds a type descriptor string for it on every
	 * call.
	 */
	private final Map<Method, ArgumentKey> argumentKeys = new ConcurrentHashMap<>();

	/**
	 * What every call's context has in common: accessors, conversion, and {@code @bean}
	 * references.
	 */
	private final StandardEvaluationContext shared = new StandardEvaluationContext();

	/** The shared context's conversions, refusing to print any value's identity. */
	private final IdentityRefusingConverter converter = new IdentityRefusingConverter(this.shared.getTypeConverter());

	LockKeyEvaluator(@Nullable BeanFactory beanFactory) {
		if (beanFactory != null) {
			this.shared.setBeanResolver(new BeanFactoryResolver(beanFactory));
		}
	}

	/**
	 * Returns the resources to lock for one call, in the canonical order they are
	 * acquired in: sorted, without duplicates. The lock name alone when the method has no
	 * key expression.
	 * @throws IllegalArgumentException if an expression fails, yields null or an empty
	 * string, or would print an object's identity ({@link IdentityStrings})
	 */
	List<String> resources(LockAttributes attributes, Object[] args, Object target, Class<?> targetClass) {
		List<Expression> keys = attributes.keys();
		if (keys.isEmpty()) {
			return List.of(attributes.name());
		}
		if (keys.size() == 1) {
			int argument = argumentKey(attributes);
			String source = attributes.keySources().get(0);
			return List.of((argument >= 0) ? resource(args[argument], attributes, "key", source)
					: evaluate(keys.get(0), source, attributes, context(attributes, args, target, targetClass)));
		}
		CallContext context = context(attributes, args, target, targetClass);
		TreeSet<String> resources = new TreeSet<>();
		for (int i = 0; i < keys.size(); i++) {
			resources.add(evaluate(keys.get(i), attributes.keySources().get(i), attributes, context));
		}
		return List.copyOf(resources);
	}

	/**
	 * Returns whether this call is to be locked: {@code true} without a condition.
	 * @throws IllegalArgumentException if the condition fails or yields anything but a
	 * boolean
	 */
	boolean conditionHolds(LockAttributes attributes, Object[] args, Object target, Class<?> targetClass) {
		Expression condition = attributes.condition();
		if (condition == null) {
			return true;
		}
		Object value = valueOf(condition, context(attributes, args, target, targetClass), attributes, "condition",
				attributes.conditionSource());
		if (value instanceof Boolean holds) {
			return holds;
		}
		throw new IllegalArgumentException(message(attributes, "condition", attributes.conditionSource(),
				"evaluated to " + ((value == null) ? "null" : value.getClass().getSimpleName() + " '" + value + "'")
						+ ", not a boolean"));
	}

	private CallContext context(LockAttributes attributes, Object[] args, Object target, Class<?> targetClass) {
		LockExpressionRoot root = new LockExpressionRoot(attributes.method(), args, target, targetClass);
		return new CallContext(this.shared, this.converter, root, parameterNames(attributes.method()), args);
	}

	private String evaluate(Expression key, String source, LockAttributes attributes, CallContext context) {
		String attribute = (attributes.keys().size() > 1) ? "keys" : "key";
		return resource(valueOf(key, context, attributes, attribute, source), attributes, attribute, source);
	}

	/**
	 * The resource a key's value names, refused when null or empty, or when it would
	 * print its identity; an array of values that have text is keyed by them, joined.
	 */
	private String resource(@Nullable Object value, LockAttributes attributes, String attribute, String source) {
		String resource;
		try {
			resource = (value != null) ? this.converter.text(value) : null;
		}
		catch (IdentityText ex) {
			throw new IllegalArgumentException(
					message(attributes, attribute, source, IdentityStrings.evaluatedTo(ex.value())));
		}
		if (resource == null || resource.isEmpty()) {
			throw new IllegalArgumentException(message(attributes, attribute, source, "evaluated to "
					+ ((value == null) ? "null" : "an empty string") + "; a lock needs a non-empty key"));
		}
		return resource;
	}

	private static @Nullable Object valueOf(Expression expression, CallContext context, LockAttributes attributes,
			String attribute, String source) {
		try {
			return expression.getValue(context);
		}
		catch (EvaluationException ex) {
			IdentityText identity = identityTextIn(ex);
			String problem = (identity != null) ? IdentityStrings.turnedIntoText(identity.value())
					: "could not be evaluated: " + ex.getMessage();
			throw new IllegalArgumentException(message(attributes, attribute, source, problem), ex);
		}
	}

	/**
	 * The refusal to print an identity behind a failure, if any: SpEL wraps it when it
	 * came from converting a method's argument.
	 */
	private static @Nullable IdentityText identityTextIn(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof IdentityText identity) {
				return identity;
			}
		}
		return null;
	}

	private String[] parameterNames(Method method) {
		String[] known = this.parameterNames.get(method);
		// the lambda captures this: made only on the method's first call
		return (known != null) ? known : this.parameterNames.computeIfAbsent(method, (key) -> {
			String[] names = this.parameterNameDiscoverer.getParameterNames(key);
			return (names != null) ? names : NO_NAMES;
		});
	}

	/**
	 * The index of the argument that the method's one key names by itself, or -1 when the
	 * key is any other expression (or names no argument: SpEL then says so).
	 */
	private int argumentKey(LockAttributes attributes) {
		Method method = attributes.method();
		String source = attributes.keySources().get(0);
		ArgumentKey known = this.argumentKeys.get(method);
		// one method can carry two keys: inherited from two interfaces by two classes
		if (known == null || !known.source().equals(source)) {
			known = new ArgumentKey(source, argumentNamedBy(source, parameterNames(method), method));
			this.argumentKeys.put(method, known);
		}
		return known.index();
	}

	private static int argumentNamedBy(String source, String[] names, Method method) {
		String name = source.startsWith("#") ? source.substring(1) : "";
		if (!isIdentifier(name) || name.equals("root") || name.equals("this")) {
			return -1;
		}
		return argumentIndex(name, names, method.getParameterCount());
	}

	/**
	 * The argument a variable names: by parameter name, else as {@code a0}/{@code p0}; -1
	 * for none.
	 */
	private static int argumentIndex(String name, String[] names, int arguments) {
		for (int i = 0; i < names.length && i < arguments; i++) {
			if (names[i].equals(name)) {
				return i;
			}
		}
		int index = CallContext.indexOf(name);
		return (index < arguments) ? index : -1;
	}

	/**
	 * A key expression as written, and the index of the argument it names by itself, or
	 * -1.
	 */
	private record ArgumentKey(String source, int index) {
	}

	private static boolean isIdentifier(String name) {
		if (name.isEmpty() || !Character.isJavaIdentifierStart(name.charAt(0))) {
			return false;
		}
		for (int i = 1; i < name.length(); i++) {
			if (!Character.isJavaIdentifierPart(name.charAt(i))) {
				return false;
			}
		}
		return true;
	}

	private static String message(LockAttributes attributes, String attribute, String source, String problem) {
		return "@DistributedLock on " + attributes.description() + ": attribute '" + attribute + "' = \"" + source
				+ "\" " + problem;
	}

	/**
	 * The evaluation context of one call: the call's root object and arguments,
	 * everything else (accessors, type conversion, the bean resolver) from one context
	 * shared by all calls, so a call allocates almost nothing. Arguments are variables by
	 * parameter name and as {@code #a0}/{@code #p0}; variables an expression assigns live
	 * only in this call.
	 */
	private static final class CallContext implements EvaluationContext {

		private final StandardEvaluationContext shared;

		private final TypeConverter converter;

		private final TypedValue root;

		private final String[] names;

		private final Object[] args;

		private @Nullable Map<String, Object> assigned;

		CallContext(StandardEvaluationContext shared, TypeConverter converter, Object root, String[] names,
				Object[] args) {
			this.shared = shared;
			this.converter = converter;
			this.root = new TypedValue(root);
			this.names = names;
			this.args = args;
		}

		@Override
		public TypedValue getRootObject() {
			return this.root;
		}

		@Override
		public List<PropertyAccessor> getPropertyAccessors() {
			return this.shared.getPropertyAccessors();
		}

		@Override
		public List<IndexAccessor> getIndexAccessors() {
			return this.shared.getIndexAccessors();
		}

		@Override
		public List<ConstructorResolver> getConstructorResolvers() {
			return this.shared.getConstructorResolvers();
		}

		@Override
		public List<MethodResolver> getMethodResolvers() {
			return this.shared.getMethodResolvers();
		}

		@Override
		public @Nullable BeanResolver getBeanResolver() {
			return this.shared.getBeanResolver();
		}

		@Override
		public TypeLocator getTypeLocator() {
			return this.shared.getTypeLocator();
		}

		@Override
		public TypeConverter getTypeConverter() {
			return this.converter;
		}

		@Override
		public TypeComparator getTypeComparator() {
			return this.shared.getTypeComparator();
		}

		@Override
		public OperatorOverloader getOperatorOverloader() {
			return this.shared.getOperatorOverloader();
		}

		@Override
		public void setVariable(String name, @Nullable Object value) {
			if (this.assigned == null) {
				this.assigned = new HashMap<>();
			}
			this.assigned.put(name, value);
		}

		@Override
		public @Nullable Object lookupVariable(String name) {
			if (this.assigned != null && this.assigned.containsKey(name)) {
				return this.assigned.get(name);
			}
			int index = argumentIndex(name, this.names, this.args.length);
			return (index >= 0) ? this.args[index] : null;
		}

		/** The index in {@code a0}, {@code p12}, …; -1 for any other name. */
		static int indexOf(String name) {
			if (name.length() < 2 || name.length() > 7 || (name.charAt(0) != 'a' && name.charAt(0) != 'p')) {
				return -1;
			}
			int index = 0;
			for (int i = 1; i < name.length(); i++) {
				char digit = name.charAt(i);
				if (digit < '0' || digit > '9') {
					return -1;
				}
				index = index * 10 + (digit - '0');
			}
			return index;
		}

	}

}
