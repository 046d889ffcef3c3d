package dev.redlock.core;

/**
 * One node's wall clock, as this client's monotonic clock sees it: a forward step of the
 * node's clock expires our keys there early (Redis compares a key's absolute expiry with
 * its wall clock), without a restart. Each reading of the node's {@code TIME} is known to
 * have been taken between two local instants, so it bounds the node's offset (its clock
 * minus ours) from above and below. A step is proven when the lowest offset the newest
 * reading allows exceeds the highest one seen before by more than a threshold.
 *
 * <p>
 * The baseline is the lowest upper bound seen over the current and the previous period,
 * each a restart quarantine long: so it always holds a reading taken before any lock that
 * is still valid (no TTL exceeds the quarantine), and small steps add up against it
 * instead of each passing unseen, while the clocks' slow drift over a few minutes stays
 * far below the threshold. A node first met less than a quarantine ago has no such
 * history: it is compared with the other nodes instead ({@link AcquireRound}).
 */
final class ClockWatch {

	/** Below this span, the rate of a clock is not estimated. */
	private static final long RATE_SPAN_NANOS = 10_000_000_000L;

	private final long periodNanos;

	private boolean seen;

	private long firstSeenAt;

	private long periodStart;

	private long previousHigh;

	private long currentHigh;

	private long rateAnchorAt;

	private long rateAnchorHigh;

	/**
	 * @param periodNanos the restart quarantine: how far back the baseline reaches, at
	 * least
	 */
	ClockWatch(long periodNanos) {
		this.periodNanos = periodNanos;
	}

	/**
	 * Takes a reading of the node's clock into account.
	 * @param nodeMicros the node's {@code TIME}, in microseconds
	 * @param before a local monotonic reading (nanoseconds) from before the node read its
	 * clock
	 * @param after a local monotonic reading from after
	 * @return how far the node's clock has proven to step forward since the baseline, in
	 * nanoseconds; zero or less when no step is proven
	 */
	synchronized long observe(long nodeMicros, long before, long after) {
		long node = nodeMicros * 1_000;
		long low = node - after;
		long high = node - before;
		if (!this.seen) {
			this.seen = true;
			this.firstSeenAt = before;
			rebase(high, after);
			return 0;
		}
		long step = low - Math.min(this.previousHigh, this.currentHigh);
		if (after - this.periodStart >= this.periodNanos) {
			this.previousHigh = this.currentHigh;
			this.currentHigh = high;
			this.periodStart = after;
		}
		else {
			this.currentHigh = Math.min(this.currentHigh, high);
		}
		return step;
	}

	/**
	 * Makes the newest reading the baseline, after a step was dealt with: further steps
	 * are measured from there.
	 */
	synchronized void rebase(long nodeMicros, long before, long after) {
		rebase(nodeMicros * 1_000 - before, after);
	}

	private void rebase(long high, long at) {
		this.previousHigh = high;
		this.currentHigh = high;
		this.periodStart = at;
		this.rateAnchorAt = at;
		this.rateAnchorHigh = high;
	}

	/**
	 * Whether this client met the node less than a quarantine ago: its own history cannot
	 * prove a step yet.
	 * @param now a local monotonic reading
	 */
	synchronized boolean isNew(long now) {
		return !this.seen || now - this.firstSeenAt < this.periodNanos;
	}

	/**
	 * Returns by how much the node's clock runs faster than ours, as far as proven since
	 * the last step (or the first reading).
	 * @param nodeMicros the newest reading of the node's clock
	 * @param after a local monotonic reading from after it
	 * @return the excess rate (0.02 for 2 % fast), or 0 when not measurable yet
	 */
	synchronized double excessRate(long nodeMicros, long after) {
		long span = after - this.rateAnchorAt;
		if (!this.seen || span < RATE_SPAN_NANOS) {
			return 0;
		}
		long gained = (nodeMicros * 1_000 - after) - this.rateAnchorHigh;
		return Math.max(0, (double) gained / span);
	}

}
