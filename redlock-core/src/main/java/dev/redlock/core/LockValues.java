package dev.redlock.core;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Makes the random value that signs one acquisition: 20 bytes from {@link SecureRandom},
 * as the Redlock specification suggests, encoded as 27 URL-safe Base64 characters. The
 * bytes of many values are drawn at once: one call to the generator per value cost more
 * than the rest of forming the value (and 80 bytes of garbage).
 */
final class LockValues {

	static final int RANDOM_BYTES = 20;

	private static final int ENCODED_LENGTH = (RANDOM_BYTES * 4 + 2) / 3;

	/** How many values' bytes one draw from the generator serves. */
	private static final int VALUES_PER_DRAW = 64;

	private static final SecureRandom RANDOM = new SecureRandom();

	private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();

	/** Not the monitor: a virtual thread waiting on one could pin its carrier. */
	private static final ReentrantLock lock = new ReentrantLock();

	/** Bytes drawn, used from {@link #used} on; guarded by {@link #lock}. */
	private static final byte[] drawn = new byte[RANDOM_BYTES * VALUES_PER_DRAW];

	/** One value's bytes, on their way to the encoder; guarded by {@link #lock}. */
	private static final byte[] oneValue = new byte[RANDOM_BYTES];

	private static int used = drawn.length;

	private LockValues() {
	}

	/**
	 * A new value, ready to be sent: the encoded characters are ASCII, so they are their
	 * own UTF-8 bytes.
	 */
	static RawArgument next() {
		byte[] encoded = new byte[ENCODED_LENGTH];
		lock.lock();
		try {
			if (used == drawn.length) {
				RANDOM.nextBytes(drawn);
				used = 0;
			}
			System.arraycopy(drawn, used, oneValue, 0, RANDOM_BYTES);
			used += RANDOM_BYTES;
			ENCODER.encode(oneValue, encoded);
		}
		finally {
			lock.unlock();
		}
		return RawArgument.wrap(encoded);
	}

}
