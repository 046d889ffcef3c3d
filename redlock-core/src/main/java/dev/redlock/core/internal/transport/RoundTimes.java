package dev.redlock.core.internal.transport;

import java.util.concurrent.TimeUnit;

/**
 * How long a {@code Fanout} round waits, beyond a node's expected latency, and how
 * deadlines become socket timeouts.
 */
public final class RoundTimes {

	/**
	 * How much later than expected a node may answer and still be waited for once a round
	 * is settled (at least; as long again as the round took to settle, if longer): more
	 * than a busy machine's scheduling delay, less than a frozen process, a failover or a
	 * congested link.
	 */
	public static final long LAG_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

	/**
	 * How much quicker one node's quickest answers must be than another's for it to count
	 * as nearer: nodes in one data centre differ by tens of microseconds, nodes in two
	 * zones or regions by a millisecond or more.
	 */
	public static final long NEAR_NANOS = TimeUnit.MICROSECONDS.toNanos(500);

	/**
	 * The longest a round parks between two looks at replies that are expected later and
	 * connections being opened.
	 */
	public static final long MAX_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(500);

	private RoundTimes() {
	}

	/** The milliseconds left until a deadline, as a socket timeout: at least 1. */
	public static int millisLeft(long deadline) {
		long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
		// a socket timeout of 0 means "forever": never hand it out
		return (int) Math.max(1, Math.min(Integer.MAX_VALUE, left));
	}

}
