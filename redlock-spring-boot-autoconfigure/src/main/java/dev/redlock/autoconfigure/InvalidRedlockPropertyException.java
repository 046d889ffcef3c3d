package dev.redlock.autoconfigure;

import org.jspecify.annotations.Nullable;

/**
 * Thrown at startup when a {@code redlock.*} property cannot give a safe lock. The
 * message names the property and never contains a Redis password.
 */
public class InvalidRedlockPropertyException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final String property;

	private final String reason;

	/**
	 * Creates the exception.
	 * @param property the property at fault, e.g. {@code redlock.nodes[1]}
	 * @param reason what is wrong with it
	 * @param cause the underlying exception, if any
	 */
	public InvalidRedlockPropertyException(String property, String reason, @Nullable Throwable cause) {
		super("Invalid Redlock configuration, property '" + property + "': " + reason, cause);
		this.property = property;
		this.reason = reason;
	}

	/**
	 * Returns the property at fault.
	 * @return e.g. {@code redlock.clock-drift-factor}
	 */
	public String property() {
		return this.property;
	}

	/**
	 * Returns what is wrong with the property.
	 * @return the reason, without the property name
	 */
	public String reason() {
		return this.reason;
	}

}
