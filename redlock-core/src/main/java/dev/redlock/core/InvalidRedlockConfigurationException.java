package dev.redlock.core;

/**
 * Thrown when a {@link Redlock} is built from settings or nodes that cannot give a safe
 * lock.
 *
 * <p>
 * {@link #setting()} names the offending setting as it is called in Java
 * ({@code defaultTtl}, {@code clockDriftFactor}, {@code nodes[2]} …) so that callers such
 * as the Spring Boot auto-configuration can translate it into the property the user
 * wrote. Messages never contain Redis passwords.
 */
public class InvalidRedlockConfigurationException extends IllegalArgumentException {

	private static final long serialVersionUID = 1L;

	private final String setting;

	/**
	 * Creates an exception for the given setting.
	 * @param setting the Java name of the setting at fault, e.g. {@code nodes[1]}
	 * @param message what is wrong with it and what is expected instead
	 */
	public InvalidRedlockConfigurationException(String setting, String message) {
		super(setting + ": " + message);
		this.setting = setting;
	}

	/**
	 * Returns the Java name of the setting at fault, e.g. {@code nodes[1]} or
	 * {@code defaultTtl}.
	 * @return the setting name
	 */
	public String setting() {
		return this.setting;
	}

	/**
	 * Returns the message without the setting name in front of it.
	 * @return the reason the setting was refused
	 */
	public String reason() {
		String message = getMessage();
		return message.substring(this.setting.length() + 2);
	}

}
