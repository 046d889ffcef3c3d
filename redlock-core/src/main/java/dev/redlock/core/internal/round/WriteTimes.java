package dev.redlock.core.internal.round;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.redlock.core.internal.transport.NodeConnectionPool;
import dev.redlock.core.internal.transport.RoundTimes;

/**
 * When a round wrote to each node, which replies say how fast their node is, which nodes
 * count as slow, and which reply is due first, and when. A reply that may have arrived
 * while the round waited for another node says nothing of its own node's speed: counted,
 * it would make a fast node look as slow as the one waited for. The base of
 * {@link FanoutRound}, rather than an object of its own, so that a round is one
 * allocation less.
 */
abstract class WriteTimes {

	/**
	 * A read that takes longer than this waited for its reply, rather than finding it
	 * there.
	 */
	private static final long BLOCKED_NANOS = TimeUnit.MICROSECONDS.toNanos(200);

	/** {@link System#nanoTime()} when the round started. */
	final long start;

	/**
	 * When each node's command was written; {@code null} while every command went out in
	 * the first pass, at about {@link #start} (the usual case, which allocates nothing
	 * more).
	 */
	private long[] writtenAt;

	/**
	 * Whether the first pass over the nodes is over: later writes have their own time.
	 */
	private boolean firstPassDone;

	/** Whether a read had to wait for its reply, and when the last such read ended. */
	private boolean blocked;

	private long blockedUntil;

	WriteTimes(long start) {
		this.start = start;
	}

	/** How many nodes the round writes to, at most. */
	abstract int nodeCount();

	final void firstPassDone() {
		this.firstPassDone = true;
	}

	/** Records a write to the node, now. */
	final void written(int node) {
		if (this.firstPassDone) {
			if (this.writtenAt == null) {
				this.writtenAt = new long[nodeCount()];
				Arrays.fill(this.writtenAt, this.start);
			}
			this.writtenAt[node] = System.nanoTime();
		}
	}

	/** When the node's command was written. */
	final long writtenAt(int node) {
		return (this.writtenAt != null) ? this.writtenAt[node] : this.start;
	}

	/**
	 * Whether the node's reply may have arrived while the round waited for another node:
	 * then a reply found waiting may be much older than its read, and says only that the
	 * node answered within that time.
	 */
	final boolean mayHaveArrivedUnseen(int node) {
		return this.blocked && writtenAt(node) - this.blockedUntil < 0;
	}

	/**
	 * Records a read, and tells whether its reply measures its node's latency.
	 * @param readStart when the read began
	 * @param readEnd when it ended
	 */
	final boolean measures(int node, long readStart, long readEnd) {
		boolean waited = readEnd - readStart > BLOCKED_NANOS;
		boolean sampled = waited || !this.blocked || writtenAt(node) - this.blockedUntil >= 0;
		if (waited) {
			this.blocked = true;
			this.blockedUntil = readEnd;
		}
		return sampled;
	}

	/**
	 * Of the nodes that still owe a reply, the one expected to answer first, by when it
	 * was written and how fast it usually answers; -1 if none owes one. Of two nodes
	 * expected within a busy machine's scheduling delay of each other, and about as near,
	 * the one written to first is taken: on a busy client, waiting for a CPU makes up
	 * most of every measurement, above all the measurements of the nodes read first, so
	 * the estimates would pick a node at random, often one written to last, while the
	 * replies mostly come in the order they were asked for.
	 * @param owing a non-null entry for each node that still owes a reply
	 */
	final int expectedFirst(List<NodeConnectionPool> pools, Object[] owing) {
		int first = -1;
		long firstDue = 0;
		for (int i = 0; i < owing.length; i++) {
			if (owing[i] != null) {
				long due = dueAt(pools, i);
				if (first < 0 || (alike(pools.get(i), pools.get(first), due - firstDue)
						? writtenAt(i) - writtenAt(first) < 0 : due - firstDue < 0)) {
					first = i;
					firstDue = due;
				}
			}
		}
		return first;
	}

	/**
	 * Whether two nodes answer alike: their replies are expected within a busy machine's
	 * scheduling delay of each other, and they are about as near (their quickest answers
	 * differ by less than {@link RoundTimes#NEAR_NANOS}).
	 */
	private static boolean alike(NodeConnectionPool one, NodeConnectionPool other, long dueApart) {
		return Math.abs(dueApart) <= RoundTimes.LAG_SLACK_NANOS
				&& Math.abs(one.latency().quickestNanos() - other.latency().quickestNanos()) <= RoundTimes.NEAR_NANOS;
	}

	/**
	 * The latency above which a node counts as slow: several times the fastest node's,
	 * and more than a busy machine's scheduling delay. Relative, so that a loaded client,
	 * whose every reply waits for a CPU, does not take healthy nodes for slow ones.
	 * @param pools the round's nodes
	 */
	static long slowThreshold(List<NodeConnectionPool> pools) {
		long fastest = Long.MAX_VALUE;
		for (int i = 0; i < pools.size(); i++) {
			fastest = Math.min(fastest, pools.get(i).latency().expectedNanos());
		}
		return Math.max(RoundTimes.LAG_SLACK_NANOS, 4 * fastest);
	}

	/**
	 * When a node's reply is due: when its command was written, plus how long it usually
	 * takes to answer.
	 */
	final long dueAt(List<NodeConnectionPool> pools, int node) {
		return writtenAt(node) + pools.get(node).latency().expectedNanos();
	}

	/**
	 * Whether a reply due at the given time is late: more than a busy machine's
	 * scheduling delay has passed since. Until then a round waits for the node it expects
	 * first, as it would for whatever came first; looking for other replies that may have
	 * arrived would cost a system call per node, mostly for nothing.
	 * @param due {@link System#nanoTime()} when the reply was due
	 */
	static boolean isLate(long due) {
		return System.nanoTime() - (due + RoundTimes.LAG_SLACK_NANOS) >= 0;
	}

}
