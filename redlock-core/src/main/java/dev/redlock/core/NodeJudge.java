package dev.redlock.core;

import java.util.Arrays;

/**
 * Judges, for one acquisition round, whether each node's reply proves the node still
 * remembers the locks it granted: the node's clock and marker come with the grant, read
 * in the same step as the {@code SET}. A node this client has known for a quarantine is
 * judged by its own clock's history, one met more recently against the other nodes'
 * clocks read in the same round (at least a quorum of them). Each reply is judged once;
 * what the judgement finds quarantines the node.
 */
final class NodeJudge {

	private static final byte UNJUDGED = 0;

	private static final byte TRUSTED = 1;

	private static final byte DISTRUSTED = 2;

	/** A node met recently, waiting to be compared with the others. */
	private static final byte COMPARED = 3;

	private final NodeGroup group;

	private final long ttlNanos;

	/** {@link System#nanoTime()} before the round's command was written. */
	private final long roundStart = System.nanoTime();

	private byte[] verdicts;

	NodeJudge(NodeGroup group, long ttlNanos) {
		this.group = group;
		this.ttlNanos = ttlNanos;
	}

	/**
	 * Whether a reply's grant may count, as far as the node's clock and marker tell.
	 * @param reply a reply of the acquisition script
	 * @param replies every reply read so far in the round, for the comparison of clocks
	 */
	boolean trusts(NodeReply reply, NodeReply[] replies) {
		int node = reply.node();
		NodeQuarantine quarantine = this.group.quarantine(node);
		if (!quarantine.isOn()) {
			return true;
		}
		if (this.verdicts == null) {
			this.verdicts = new byte[replies.length];
		}
		byte verdict = this.verdicts[node];
		if (verdict == TRUSTED || verdict == DISTRUSTED) {
			return verdict == TRUSTED;
		}
		long now = System.nanoTime();
		Object value = reply.value();
		long nodeMicros = AcquireReply.nodeMicros(value);
		if (verdict == UNJUDGED) {
			if (nodeMicros < 0) {
				// a user who may not read the node's clock: the marker is judged by ours
				quarantine.clockUnreadable();
				boolean admitted = quarantine.markers()
					.admits(AcquireReply.marker(value), System.currentTimeMillis(), now);
				this.verdicts[node] = admitted ? TRUSTED : DISTRUSTED;
				return admitted;
			}
			boolean admitted = quarantine.admitsClock(nodeMicros, this.roundStart, now, this.ttlNanos)
					&& quarantine.markers().admits(AcquireReply.marker(value), nodeMicros / 1_000, now);
			if (!admitted) {
				this.verdicts[node] = DISTRUSTED;
				return false;
			}
			if (!quarantine.isNewClock(now)) {
				this.verdicts[node] = TRUSTED;
				return true;
			}
			this.verdicts[node] = COMPARED;
		}
		long ahead = aheadOfTheOthers(nodeMicros, replies, now);
		if (ahead == Long.MIN_VALUE) {
			// too few clocks read yet to compare with: not counted so far
			return false;
		}
		if (ahead > quarantine.stepThresholdNanos(this.ttlNanos)) {
			quarantine.clockAhead(ahead, nodeMicros, this.roundStart, now);
			this.verdicts[node] = DISTRUSTED;
			return false;
		}
		this.verdicts[node] = TRUSTED;
		return true;
	}

	/**
	 * How far a node's clock is proven ahead of the median of the clocks read in this
	 * round: every reading was taken between the round's start and now, so that span is
	 * taken off.
	 * @return nanoseconds, or {@link Long#MIN_VALUE} when fewer than a quorum of clocks
	 * were read
	 */
	private long aheadOfTheOthers(long nodeMicros, NodeReply[] replies, long now) {
		long[] clocks = new long[replies.length];
		int read = 0;
		for (NodeReply other : replies) {
			if (other != null && other.kind() == NodeReply.Kind.REPLIED) {
				long micros = AcquireReply.nodeMicros(other.value());
				if (micros >= 0) {
					clocks[read++] = micros;
				}
			}
		}
		if (read < this.group.quorum()) {
			return Long.MIN_VALUE;
		}
		Arrays.sort(clocks, 0, read);
		// the lower median: a minority of clocks ahead cannot move it up
		long median = clocks[(read - 1) / 2];
		return (nodeMicros - median) * 1_000 - (now - this.roundStart);
	}

	/**
	 * Whether a fenced grant's counter was confirmed by a quorum since the node last
	 * forgot (it records the generation of the node's marker), or the node never forgot:
	 * only such counters keep tokens rising, since any later quorum shares one of them.
	 */
	boolean confirmedCounter(NodeReply reply) {
		if (!this.group.quarantine(reply.node()).isOn()) {
			return true;
		}
		Object raw = AcquireReply.marker(reply.value());
		if (raw instanceof byte[] bytes && bytes.length == 1 && bytes[0] == '-') {
			// a marker this client may not read: counters are taken as they are
			return true;
		}
		NodeMarker marker = NodeMarker.parse(raw);
		return marker != null && (marker.countersOk() || marker.nonce().equals(AcquireReply.generation(reply.value())));
	}

}
