package dev.redlock.core.internal.quarantine;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The consensus of a round's clocks on its own: what it clears and what it convicts, for
 * honest clocks within half the tolerance of a common time and up to {@code f} faulty
 * ones anywhere. The rule over whole rounds and faults is explored by
 * {@link ForgetfulMinoritySimulationTests}.
 */
class ClockConsensusTests {

	private static final long MS = 1_000_000L;

	/** The tolerance b. */
	private static final long B = 10 * MS;

	/** How long reading a clock may take in these tests: the width of an interval. */
	private static final long READ = MS / 10;

	@Test
	void clocksWithinTheToleranceAllClear() {
		ClockConsensus consensus = consensusOf(2, 0, 4 * MS, -4 * MS, 2 * MS, -1 * MS);
		for (long offset : new long[] { 0, 4 * MS, -4 * MS, 2 * MS, -1 * MS }) {
			assertThat(judge(consensus, offset)).isEqualTo(ClockConsensus.CLEARED);
		}
	}

	@Test
	void fewerReadingsThanFaultyNodesPlusOneDecideNothing() {
		ClockConsensus consensus = consensusOf(2, 0, 0);
		assertThat(judge(consensus, 0)).isEqualTo(ClockConsensus.UNDECIDED);
		assertThat(judge(consensus, 120_000 * MS)).isEqualTo(ClockConsensus.UNDECIDED);
	}

	@Test
	void twoStepsOfFiveAreConvictedOnceEveryClockIsIn() {
		long step = 120_000 * MS;
		ClockConsensus consensus = consensusOf(2, step, step, 0, 0, 0);
		assertThat(judge(consensus, step)).isEqualTo(ClockConsensus.AHEAD);
		assertThat(judge(consensus, 0)).isEqualTo(ClockConsensus.CLEARED);
	}

	@Test
	void twoStepsAmongTheFirstThreeClocksClearNothingAndConvictNobody() {
		// one honest clock and two stepped ones look alike from either side: a quorum
		// of readings cannot tell them apart, so nothing is decided yet
		long step = 120_000 * MS;
		ClockConsensus consensus = consensusOf(2, step, step, 0);
		assertThat(judge(consensus, step)).isEqualTo(ClockConsensus.UNDECIDED);
		assertThat(judge(consensus, 0)).isEqualTo(ClockConsensus.UNDECIDED);
	}

	@Test
	void aClockBehindTheOthersIsConvictedToo() {
		ClockConsensus consensus = consensusOf(1, 0, 0, -30_000 * MS);
		assertThat(judge(consensus, -30_000 * MS)).isEqualTo(ClockConsensus.BEHIND);
		assertThat(judge(consensus, 0)).isEqualTo(ClockConsensus.CLEARED);
	}

	@Test
	void aReadingMoreUncertainThanTheToleranceNeverClears() {
		ClockConsensus consensus = new ClockConsensus(1, B);
		long[] lows = { -READ, -READ, -B - MS };
		long[] highs = { 0, 0, 0 };
		consensus.reference(lows, highs, 3);
		// the third was read after a pause longer than the tolerance
		assertThat(consensus.judge(lows[2], highs[2])).isEqualTo(ClockConsensus.UNDECIDED);
		assertThat(consensus.judge(lows[0], highs[0])).isEqualTo(ClockConsensus.CLEARED);
	}

	@Test
	void noMinorityOfFaultyClocksGetsAnHonestOneConvictedOrAFarOneCleared() {
		// N = 5, f = 2: three honest clocks at the extremes of half the tolerance, two
		// faulty ones anywhere on a grid, in every subset of readings of at least f + 1
		long[] honest = { -B / 2 + READ, B / 2 - READ, 0 };
		List<Long> anywhere = new ArrayList<>();
		for (long offset = -40 * B; offset <= 40 * B; offset += B / 4) {
			anywhere.add(offset);
		}
		int checked = 0;
		for (long first : anywhere) {
			for (long second : anywhere) {
				long[] all = { first, second, honest[0], honest[1], honest[2] };
				for (int subset = 0; subset < 32; subset++) {
					if (Integer.bitCount(subset) < 3) {
						continue;
					}
					ClockConsensus consensus = consensusOf(2, pick(all, subset));
					for (int node = 0; node < 5; node++) {
						byte verdict = judge(consensus, all[node]);
						if (node >= 2) {
							assertThat(verdict).as("honest clock %d ms", all[node] / MS)
								.isIn(ClockConsensus.CLEARED, ClockConsensus.UNDECIDED);
						}
						if (verdict == ClockConsensus.CLEARED) {
							// within 1.5 tolerances of the common time: a step between
							// two
							// clearings is at most 3 tolerances
							assertThat(Math.abs(all[node])).isLessThanOrEqualTo(B + B / 2);
						}
						checked++;
					}
				}
			}
		}
		assertThat(checked).isEqualTo(anywhere.size() * anywhere.size() * 16 * 5);
	}

	private static long[] pick(long[] all, int subset) {
		long[] picked = new long[Integer.bitCount(subset)];
		int at = 0;
		for (int i = 0; i < all.length; i++) {
			if ((subset & (1 << i)) != 0) {
				picked[at++] = all[i];
			}
		}
		return picked;
	}

	/**
	 * A consensus of clocks read at the given offsets, each read within {@link #READ}.
	 */
	private static ClockConsensus consensusOf(int faultyAtMost, long... offsets) {
		ClockConsensus consensus = new ClockConsensus(faultyAtMost, B);
		long[] lows = new long[offsets.length];
		long[] highs = new long[offsets.length];
		for (int i = 0; i < offsets.length; i++) {
			lows[i] = offsets[i] - READ;
			highs[i] = offsets[i];
		}
		consensus.reference(lows, highs, offsets.length);
		return consensus;
	}

	private static byte judge(ClockConsensus consensus, long offset) {
		return consensus.judge(offset - READ, offset);
	}

}
