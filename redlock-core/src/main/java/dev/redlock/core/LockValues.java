package dev.redlock.core;

import java.security.SecureRandom;
import java.util.Base64;

/**
 * Makes the random value that signs one acquisition: 20 bytes from {@link SecureRandom},
 * as the Redlock specification suggests, encoded as 27 URL-safe Base64 characters.
 */
final class LockValues {

	static final int RANDOM_BYTES = 20;

	private static final SecureRandom RANDOM = new SecureRandom();

	private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();

	private LockValues() {
	}

	/**
	 * A new value, ready to be sent: the encoded characters are ASCII, so they are their
	 * own UTF-8 bytes.
	 */
	static RawArgument next() {
		byte[] bytes = new byte[RANDOM_BYTES];
		RANDOM.nextBytes(bytes);
		return RawArgument.wrap(ENCODER.encode(bytes));
	}

}
