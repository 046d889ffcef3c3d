package dev.redlock.interceptor;

import org.jspecify.annotations.Nullable;

/**
 * Tells which values print as {@link Object#toString()} does: the class name and the
 * identity hash, different for every object and in every JVM. Two instances of a service
 * locking the same order by such a string lock two different resources: nothing is
 * excluded. Arrays print that way too; an array whose elements can be turned into text is
 * keyed by them instead (as SpEL's conversion joins them).
 */
final class IdentityStrings {

	private static final ClassValue<Boolean> PRINTS_IDENTITY = new ClassValue<>() {

		@Override
		protected Boolean computeValue(Class<?> type) {
			if (type.isArray()) {
				return true;
			}
			try {
				return type.getMethod("toString").getDeclaringClass() == Object.class;
			}
			catch (NoSuchMethodException ex) {
				// interfaces and primitive types (asked about by type, never as a
				// value's class) have none
				return false;
			}
		}

	};

	private IdentityStrings() {
	}

	/**
	 * Whether the value's {@code toString()} is {@link Object}'s, or it is an array.
	 * @param value the value, possibly {@code null} (which prints as {@code "null"})
	 * @return {@code true} if it prints its identity rather than its content
	 */
	static boolean printsIdentity(@Nullable Object value) {
		return value != null && printsIdentity(value.getClass());
	}

	/**
	 * Whether the instances of a class print their identity.
	 * @param type the class
	 * @return {@code true} if its {@code toString()} is {@link Object}'s, or it is an
	 * array
	 */
	static boolean printsIdentity(Class<?> type) {
		return PRINTS_IDENTITY.get(type);
	}

	/**
	 * Why a key that evaluated to a value printing its identity is refused.
	 * @param value a value for which {@link #printsIdentity} holds
	 * @return the explanation, for an error message
	 */
	static String evaluatedTo(Object value) {
		return problem("evaluated to a " + value.getClass().getTypeName(), value);
	}

	/**
	 * Why a key that turns a value printing its identity into text (in a concatenation,
	 * or as a {@code String} argument) is refused.
	 * @param value a value for which {@link #printsIdentity} holds
	 * @return the explanation, for an error message
	 */
	static String turnedIntoText(Object value) {
		return problem("turns a " + value.getClass().getTypeName() + " into text", value);
	}

	private static String problem(String what, Object value) {
		Class<?> type = value.getClass();
		if (type.isArray()) {
			return what + ", whose elements have no text of their own: it prints as its class and identity hash, a "
					+ "different resource for every array and in every JVM, and nothing would be locked. Key by what "
					+ "identifies each element";
		}
		boolean named = !type.isAnonymousClass() && !type.isSynthetic() && !type.getSimpleName().isEmpty()
				&& !type.getSimpleName().contains("$$");
		return what + ": it has no toString() of its own, so it prints as its class and identity hash, a different "
				+ "resource for every object and in every JVM, and nothing would be locked. Use one of its properties"
				+ (named ? ", or give " + type.getSimpleName() + " a toString() that identifies it" : "");
	}

}
