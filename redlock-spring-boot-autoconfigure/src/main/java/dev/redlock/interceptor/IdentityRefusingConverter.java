package dev.redlock.interceptor;

import org.jspecify.annotations.Nullable;
import org.springframework.core.convert.TypeDescriptor;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.TypeConverter;

/**
 * SpEL's conversions, except that a value whose text would be its identity is never
 * turned into a {@code String}: {@code 'order:' + #order} would otherwise name a
 * different resource on every call when {@code Order} has no {@code toString()}. Arrays
 * are joined by SpEL's conversion when their elements can be turned into text.
 */
record IdentityRefusingConverter(TypeConverter delegate) implements TypeConverter {

	private static final TypeDescriptor STRING = TypeDescriptor.valueOf(String.class);

	@Override
	public boolean canConvert(@Nullable TypeDescriptor sourceType, TypeDescriptor targetType) {
		// a concatenation asks first, and prints the value itself when told no
		return printedAsIdentity(sourceType, targetType) || this.delegate.canConvert(sourceType, targetType);
	}

	@Override
	public @Nullable Object convertValue(@Nullable Object value, @Nullable TypeDescriptor sourceType,
			TypeDescriptor targetType) {
		// any other value converts as SpEL would (a list joins its elements, an enum
		// gives its name): keys stay what they were before identities were refused
		if (value != null && targetType.getType() == String.class && IdentityStrings.printsIdentity(value)) {
			return elementsOf(value);
		}
		return this.delegate.convertValue(value, sourceType, targetType);
	}

	/**
	 * A key's value as the resource: its own text, or an array's elements joined; never
	 * its identity.
	 * @throws IdentityText if it would be its identity
	 */
	String text(Object value) {
		return IdentityStrings.printsIdentity(value) ? elementsOf(value) : value.toString();
	}

	/**
	 * An array's elements joined by SpEL's conversion, for a value printing its identity;
	 * refused ({@link IdentityText}) when they have no text either.
	 */
	private String elementsOf(Object value) {
		TypeDescriptor type = TypeDescriptor.forObject(value);
		if (value.getClass().isArray() && this.delegate.canConvert(type, STRING)) {
			return String.valueOf(this.delegate.convertValue(value, type, STRING));
		}
		throw new IdentityText(value);
	}

	private static boolean printedAsIdentity(@Nullable TypeDescriptor sourceType, TypeDescriptor targetType) {
		return sourceType != null && targetType.getType() == String.class
				&& IdentityStrings.printsIdentity(sourceType.getType());
	}

	/** A value that an expression would have printed as its identity. */
	static final class IdentityText extends EvaluationException {

		private final transient Object value;

		IdentityText(Object value) {
			super(IdentityStrings.turnedIntoText(value));
			this.value = value;
		}

		/** The value that would have been printed. */
		Object value() {
			return this.value;
		}

	}

}
