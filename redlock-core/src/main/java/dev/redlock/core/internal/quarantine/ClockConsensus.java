package dev.redlock.core.internal.quarantine;

/**
 * Whether a node's clock agrees with the other nodes', judged from one round's readings
 * in a way that no minority of faulty nodes can sway. Redis expires keys by its wall
 * clock, so a node whose clock steps forward drops our keys early there, and one whose
 * clock stands behind will drop the keys set now once it is corrected. A grant counts
 * only from a node whose clock is proven to agree with the honest ones.
 *
 * <p>
 * Each reading of a node's {@code TIME} was taken between the round's write and the
 * moment its reply was read, so it bounds the node's offset (its clock minus this
 * client's monotonic clock) by an interval {@code [low, high]}. With at most {@code f}
 * faulty nodes among the readings (a minority: {@code N - quorum}), the {@code (f+1)}-th
 * highest {@code low} is at most some honest node's offset, and the {@code (f+1)}-th
 * lowest {@code high} at least some honest node's offset, whatever the faulty ones read.
 * So, with the honest clocks within half the tolerance {@code b} of a common time, a
 * node:
 * <ul>
 * <li>is <b>cleared</b> when its {@code high} is within {@code b} above the first and its
 * {@code low} within {@code b} below the second: its clock is then within {@code 1.5 b}
 * of the common time, so between two clearings it cannot have stepped by more than
 * {@code 3 b}, which every lock's drift allowance covers;</li>
 * <li>is proven <b>ahead</b> when its {@code low} exceeds the second by more than
 * {@code b}, or <b>behind</b> when its {@code high} is more than {@code b} below the
 * first: no honest node can be, so these verdicts are never taken against an honest
 * node;</li>
 * <li>is otherwise <b>undecided</b>: it does not count in that round, and a later reading
 * may decide (more readings only widen what clears).</li>
 * </ul>
 * Fewer than {@code f + 1} readings decide nothing. Pure arithmetic: no clock, no state.
 */
final class ClockConsensus {

	/** Too few readings, or a reading too uncertain: the node does not count yet. */
	static final byte UNDECIDED = 0;

	/** Within the tolerance of the honest clocks. */
	static final byte CLEARED = 1;

	/** Proven ahead of every honest clock by more than half the tolerance. */
	static final byte AHEAD = 2;

	/** Proven behind every honest clock by more than half the tolerance. */
	static final byte BEHIND = 3;

	private final int faultyAtMost;

	private final long toleranceNanos;

	/** The {@code (f+1)}-th highest low: some honest node's offset is at least this. */
	private long belowAnHonestClock;

	/** The {@code (f+1)}-th lowest high: some honest node's offset is at most this. */
	private long aboveAnHonestClock;

	private boolean decisive;

	/**
	 * @param faultyAtMost how many of the nodes may be faulty at once: {@code N - quorum}
	 * @param toleranceNanos {@code b}: how far the clocks may be read apart and still
	 * agree
	 */
	ClockConsensus(int faultyAtMost, long toleranceNanos) {
		this.faultyAtMost = faultyAtMost;
		this.toleranceNanos = toleranceNanos;
	}

	/**
	 * Takes the round's readings so far as the reference.
	 * @param lows each reading's lowest possible offset, in nanoseconds
	 * @param highs each reading's highest possible offset, same order
	 * @param count how many readings the arrays hold
	 */
	void reference(long[] lows, long[] highs, int count) {
		reference(lows, highs, count, new long[count]);
	}

	/**
	 * {@link #reference(long[], long[], int)}, sorting in a scratch array of the caller's
	 * (at least {@code count} long), so that a round allocates it once.
	 */
	void reference(long[] lows, long[] highs, int count, long[] scratch) {
		this.decisive = count > this.faultyAtMost;
		if (this.decisive) {
			this.belowAnHonestClock = orderStatistic(lows, count, count - this.faultyAtMost - 1, scratch);
			this.aboveAnHonestClock = orderStatistic(highs, count, this.faultyAtMost, scratch);
		}
	}

	/**
	 * Judges one node's reading against the reference.
	 * @param low its lowest possible offset
	 * @param high its highest possible offset
	 * @return {@link #CLEARED}, {@link #AHEAD}, {@link #BEHIND} or {@link #UNDECIDED}
	 */
	byte judge(long low, long high) {
		if (!this.decisive) {
			return UNDECIDED;
		}
		if (low - this.aboveAnHonestClock > this.toleranceNanos) {
			return AHEAD;
		}
		if (this.belowAnHonestClock - high > this.toleranceNanos) {
			return BEHIND;
		}
		if (high - this.belowAnHonestClock <= this.toleranceNanos
				&& this.aboveAnHonestClock - low <= this.toleranceNanos) {
			return CLEARED;
		}
		return UNDECIDED;
	}

	/**
	 * How far a reading is proven off the honest clocks: by how much its {@code low}
	 * exceeds, or its {@code high} falls short of, the reference.
	 */
	long distance(long low, long high) {
		return Math.max(low - this.aboveAnHonestClock, this.belowAnHonestClock - high);
	}

	/** The {@code rank}-th lowest (from 0) of the first {@code count} values. */
	private static long orderStatistic(long[] values, int count, int rank, long[] sorted) {
		System.arraycopy(values, 0, sorted, 0, count);
		// at most seven values: an insertion sort
		for (int i = 1; i < count; i++) {
			long value = sorted[i];
			int j = i - 1;
			while (j >= 0 && sorted[j] > value) {
				sorted[j + 1] = sorted[j];
				j--;
			}
			sorted[j + 1] = value;
		}
		return sorted[rank];
	}

}
