package dev.redlock.core.internal.waiting;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The keys a {@code Redlock} leaves to waiters in other instances for a moment after
 * releasing them: long enough for a waiter elsewhere to hear of the release (half a round
 * trip) and take the lock with a round of its own, at most 20 ms and the node timeout.
 * Its own threads try such a key only once the yield has ended.
 */
final class ReleaseYields {

	/** The longest a release holds this instance's threads back. */
	private static final long MAX_YIELD_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

	/** Above this many yields remembered, those that ended are dropped. */
	private static final int YIELDS_TO_SWEEP = 1_000;

	/** By key id: the ticker reading until which the key is left to others. */
	private final ConcurrentHashMap<String, Long> ends = new ConcurrentHashMap<>();

	private final LongSupplier ticker;

	private final long nodeTimeoutNanos;

	ReleaseYields(LongSupplier ticker, long nodeTimeoutNanos) {
		this.ticker = ticker;
		this.nodeTimeoutNanos = nodeTimeoutNanos;
	}

	/**
	 * Leaves a key just released to the waiters elsewhere.
	 * @param id the key's id
	 * @param slowestReplyNanos the release's slowest confirming reply
	 */
	void yieldAfterRelease(String id, long slowestReplyNanos) {
		long window = Math.min(Math.min(this.nodeTimeoutNanos, MAX_YIELD_NANOS),
				4 * slowestReplyNanos + TimeUnit.MILLISECONDS.toNanos(2));
		if (this.ends.size() > YIELDS_TO_SWEEP) {
			long now = this.ticker.getAsLong();
			this.ends.values().removeIf((end) -> end - now <= 0);
		}
		this.ends.put(id, this.ticker.getAsLong() + window);
	}

	/** The end of the key's yield, or 0 when it yields to nobody now. */
	long end(String id) {
		Long end = this.ends.get(id);
		if (end == null) {
			return 0;
		}
		if (end - this.ticker.getAsLong() <= 0) {
			this.ends.remove(id, end);
			return 0;
		}
		return end;
	}

	/** Ends the key's yield: whoever it was left for has been told of a release. */
	void endNow(String id) {
		this.ends.remove(id);
	}

}
