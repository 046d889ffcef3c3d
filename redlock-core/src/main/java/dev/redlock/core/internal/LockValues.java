package dev.redlock.core.internal;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

import dev.redlock.core.internal.protocol.RawArgument;

/**
 * Makes the random value that signs one acquisition: 20 bytes from {@link SecureRandom},
 * as the Redlock specification suggests, encoded as 27 URL-safe Base64 characters. The
 * bytes of many values are drawn at once: one call to the generator per value cost more
 * than the rest of forming the value (and 80 bytes of garbage).
 *
 * <p>
 * Drawn bytes are used for {@link #DRAWN_VALID_MILLIS} at most, as the JDK's own
 * {@code NativePRNG} does with the bytes it buffers: a process restored from a snapshot
 * (a VM clone, a CRaC checkpoint) finds them expired, so two clones of one snapshot do
 * not sign their locks with the same values, each able to release the other's lock.
 */
final class LockValues {

	static final int RANDOM_BYTES = 20;

	/** How long drawn bytes may be used, by the wall clock. */
	static final long DRAWN_VALID_MILLIS = 100;

	private static final int ENCODED_LENGTH = (RANDOM_BYTES * 4 + 2) / 3;

	/** How many values' bytes one draw from the generator serves. */
	private static final int VALUES_PER_DRAW = 64;

	private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();

	private static final LockValues SHARED = new LockValues(new SecureRandom(), System::currentTimeMillis);

	private final SecureRandom random;

	private final LongSupplier clockMillis;

	/** Not the monitor: a virtual thread waiting on one could pin its carrier. */
	private final ReentrantLock lock = new ReentrantLock();

	/** Bytes drawn, used from {@link #used} on; guarded by {@link #lock}. */
	private final byte[] drawn = new byte[RANDOM_BYTES * VALUES_PER_DRAW];

	/** One value's bytes, on their way to the encoder; guarded by {@link #lock}. */
	private final byte[] oneValue = new byte[RANDOM_BYTES];

	private int used = this.drawn.length;

	/** When the bytes last drawn were drawn, by {@link #clockMillis}. */
	private long drawnAt;

	/**
	 * A source of values.
	 * @param random where the bytes come from
	 * @param clockMillis the wall clock, in milliseconds
	 */
	LockValues(SecureRandom random, LongSupplier clockMillis) {
		this.random = random;
		this.clockMillis = clockMillis;
	}

	/**
	 * A new value, ready to be sent: the encoded characters are ASCII, so they are their
	 * own UTF-8 bytes.
	 */
	static RawArgument next() {
		return SHARED.take();
	}

	/** A new value from this source. */
	RawArgument take() {
		byte[] encoded = new byte[ENCODED_LENGTH];
		this.lock.lock();
		try {
			long now = this.clockMillis.getAsLong();
			if (now - this.drawnAt > DRAWN_VALID_MILLIS || now < this.drawnAt) {
				// a quiet spell, or a snapshot restored (a clock gone back too): what is
				// left is stale, and a lone call needs one value's bytes, not 64 values'
				// that would expire unused
				this.used = this.drawn.length;
				this.random.nextBytes(this.oneValue);
				this.drawnAt = now;
			}
			else {
				if (this.used == this.drawn.length) {
					this.random.nextBytes(this.drawn);
					this.drawnAt = now;
					this.used = 0;
				}
				System.arraycopy(this.drawn, this.used, this.oneValue, 0, RANDOM_BYTES);
				this.used += RANDOM_BYTES;
			}
			ENCODER.encode(this.oneValue, encoded);
		}
		finally {
			this.lock.unlock();
		}
		return RawArgument.wrap(encoded);
	}

}
