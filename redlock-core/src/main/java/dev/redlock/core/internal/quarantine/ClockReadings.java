package dev.redlock.core.internal.quarantine;

import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.round.NodeReply;

/**
 * The nodes' clocks as one round read them, judged by their {@link ClockConsensus
 * consensus}: each reply's {@code TIME} is taken in once, as the interval of offsets it
 * allows (read between the round's start and the moment it is taken in, less the time the
 * reply then waited for replicas' acknowledgements), joins the reference, and any node
 * the readings prove off is quarantined at once. Shared by acquisition rounds
 * ({@link NodeJudge}) and probes ({@link NodeProbe}).
 */
final class ClockReadings {

	private final List<NodeQuarantine> quarantines;

	private final ClockConsensus consensus;

	private final ToLongFunction<@Nullable Object> clockOf;

	private final LongSupplier ticker;

	/** The ticker's reading before the round's command was written. */
	private final long roundStart;

	/** Which nodes' replies were taken in. */
	private final boolean[] taken;

	/** The verdict of the nodes proven off in this round, 0 for the others. */
	private final byte[] off;

	/** Which node each reading is from. */
	private final int[] readFrom;

	private final long[] lows;

	private final long[] highs;

	/** Where the consensus sorts. */
	private final long[] scratch;

	private int count;

	/**
	 * @param quarantines every node's quarantine, in node order
	 * @param faultyAtMost how many of the readings may be faulty: {@code N - quorum} when
	 * a round reads one node per voter, every node of that many voters when it reads
	 * every node ({@link dev.redlock.core.internal.round.VoterLayout#faultyNodesAtMost})
	 * @param toleranceNanos how far apart the nodes' clocks may read and agree
	 * @param clockOf the node's {@code TIME} in a reply's value, in microseconds, or -1
	 * @param ticker this client's monotonic clock, read now as the round's start
	 */
	ClockReadings(List<NodeQuarantine> quarantines, int faultyAtMost, long toleranceNanos,
			ToLongFunction<@Nullable Object> clockOf, LongSupplier ticker) {
		int nodes = quarantines.size();
		this.quarantines = quarantines;
		this.consensus = new ClockConsensus(faultyAtMost, toleranceNanos);
		this.clockOf = clockOf;
		this.ticker = ticker;
		this.roundStart = ticker.getAsLong();
		this.taken = new boolean[nodes];
		this.off = new byte[nodes];
		this.readFrom = new int[nodes];
		this.lows = new long[nodes];
		this.highs = new long[nodes];
		this.scratch = new long[nodes];
	}

	/**
	 * Takes in the replies read since the last call: their clocks join the reference, and
	 * any node whose clock the readings prove off is quarantined.
	 * @param replies the round's replies so far, by node
	 */
	void read(@Nullable NodeReply[] replies) {
		boolean added = false;
		for (NodeReply reply : replies) {
			if (reply == null || this.taken[reply.node()]) {
				continue;
			}
			this.taken[reply.node()] = true;
			long nodeMicros = (reply.kind() == NodeReply.Kind.REPLIED) ? this.clockOf.applyAsLong(reply.value()) : -1;
			if (nodeMicros >= 0) {
				// read between the round's start and now, less the time the reply then
				// waited for replicas: the offset lies in between
				long node = nodeMicros * 1_000;
				this.readFrom[this.count] = reply.node();
				this.lows[this.count] = node - (this.ticker.getAsLong() - reply.waitedNanos());
				this.highs[this.count] = node - this.roundStart;
				this.count++;
				added = true;
			}
		}
		if (added) {
			this.consensus.reference(this.lows, this.highs, this.count, this.scratch);
			for (int i = 0; i < this.count; i++) {
				convictIfOff(i);
			}
		}
	}

	private void convictIfOff(int reading) {
		int node = this.readFrom[reading];
		if (this.off[node] != 0) {
			return;
		}
		byte clock = this.consensus.judge(this.lows[reading], this.highs[reading]);
		if (clock == ClockConsensus.AHEAD || clock == ClockConsensus.BEHIND) {
			this.off[node] = clock;
			this.quarantines.get(node)
				.clockOff(clock == ClockConsensus.AHEAD,
						this.consensus.distance(this.lows[reading], this.highs[reading]));
		}
	}

	/**
	 * What the readings so far say of a node's clock.
	 * @return {@link ClockConsensus#CLEARED}, {@link ClockConsensus#AHEAD},
	 * {@link ClockConsensus#BEHIND}, {@link ClockConsensus#UNDECIDED}, or -1 when its
	 * clock was not read (refused)
	 */
	byte verdict(int node) {
		if (this.off[node] != 0) {
			return this.off[node];
		}
		for (int i = 0; i < this.count; i++) {
			if (this.readFrom[i] == node) {
				return this.consensus.judge(this.lows[i], this.highs[i]);
			}
		}
		return -1;
	}

	/** The ticker's reading at the round's start. */
	long roundStart() {
		return this.roundStart;
	}

}
