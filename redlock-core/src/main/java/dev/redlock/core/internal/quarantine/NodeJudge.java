package dev.redlock.core.internal.quarantine;

import java.util.List;
import java.util.function.LongSupplier;

import dev.redlock.core.RedlockSettings;
import dev.redlock.core.internal.protocol.AcquireReply;
import dev.redlock.core.internal.round.NodeReply;
import dev.redlock.core.internal.round.Quorum;

/**
 * Judges, for one acquisition round, whether each node's grant may count: the node must
 * be out of quarantine, its {@link NodeMarker marker} (read in the same step as the
 * {@code SET}) must show it has not forgotten, and its clock (read there too) must agree
 * with the other nodes' by the {@link ClockConsensus consensus} of the round's readings,
 * which no minority of faulty nodes can sway. Every reading of the round, a refusal's
 * too, joins the reference; a node proven off is quarantined. Nothing is carried from one
 * round to the next but the quarantines, so a client judges alike whether it met the
 * nodes long ago, a moment ago or never, busy or idle.
 */
public final class NodeJudge {

	/** The grant counts. */
	public static final byte COUNTS = 1;

	/** The grant does not count in this round. */
	public static final byte REFUSED = 2;

	/** Not decided yet: a later reading of the round may clear the node's clock. */
	public static final byte PENDING = 3;

	private final List<NodeQuarantine> quarantines;

	private final ClockReadings clocks;

	private final LongSupplier ticker;

	/** The verdicts decided so far: {@link #COUNTS} or {@link #REFUSED}, 0 when not. */
	private final byte[] verdicts;

	/** What this client knew of each node's marker when the round started. */
	private final MarkerWatch.Memory[] markersBefore;

	/**
	 * @param quarantines every node's quarantine, in node order
	 * @param quorum the nodes' quorum
	 * @param toleranceNanos how far apart the nodes' clocks may read and agree
	 * ({@link RedlockSettings#clockTolerance()})
	 * @param ticker this client's monotonic clock ({@link System#nanoTime()} but in
	 * simulations), read now as the round's start
	 */
	public NodeJudge(List<NodeQuarantine> quarantines, Quorum quorum, long toleranceNanos, LongSupplier ticker) {
		int nodes = quarantines.size();
		this.quarantines = quarantines;
		this.ticker = ticker;
		this.verdicts = new byte[nodes];
		this.markersBefore = new MarkerWatch.Memory[nodes];
		for (int i = 0; i < nodes; i++) {
			this.markersBefore[i] = quarantines.get(i).markers().memory();
		}
		this.clocks = new ClockReadings(quarantines, quorum.tolerated(), toleranceNanos, AcquireReply::nodeMicros,
				ticker);
	}

	/**
	 * Takes in the replies read since the last call: their clocks join the reference, and
	 * any node whose clock the readings prove off is quarantined.
	 * @param replies the round's replies so far, by node
	 */
	public void read(NodeReply[] replies) {
		this.clocks.read(replies);
	}

	/**
	 * Whether a grant counts, once {@link #read} has taken in its reply.
	 * @param reply a grant of the acquisition script
	 * @return {@link #COUNTS}, {@link #REFUSED} or {@link #PENDING}
	 */
	public byte judge(NodeReply reply) {
		int node = reply.node();
		NodeQuarantine quarantine = this.quarantines.get(node);
		byte verdict = this.verdicts[node];
		if (verdict != 0) {
			return (verdict == COUNTS && !quarantine.counts()) ? REFUSED : verdict;
		}
		if (!quarantine.counts() || !markerAdmits(reply, quarantine)) {
			this.verdicts[node] = REFUSED;
			return REFUSED;
		}
		byte clock = this.clocks.verdict(node);
		if (clock < 0) {
			// a user who may not read the node's clock: its steps go unseen (said once)
			quarantine.clockUnreadable();
			this.verdicts[node] = COUNTS;
			return COUNTS;
		}
		if (clock == ClockConsensus.CLEARED) {
			this.verdicts[node] = COUNTS;
			return COUNTS;
		}
		if (clock != ClockConsensus.UNDECIDED) {
			this.verdicts[node] = REFUSED;
			return REFUSED;
		}
		// more readings may clear it
		return PENDING;
	}

	private boolean markerAdmits(NodeReply reply, NodeQuarantine quarantine) {
		Object value = reply.value();
		long nodeMicros = AcquireReply.nodeMicros(value);
		long now = this.ticker.getAsLong();
		// without the node's clock, the marker is judged by ours
		long nodeMillis = (nodeMicros >= 0) ? nodeMicros / 1_000 : System.currentTimeMillis();
		return quarantine.markers()
			.admits(AcquireReply.marker(value), nodeMillis, now, this.markersBefore[reply.node()]);
	}

	/**
	 * Whether a fenced grant's counter was confirmed by a quorum since the node last
	 * forgot (it records the generation of the node's marker), or the node never forgot:
	 * only such counters keep tokens rising, since any later quorum shares one of them.
	 */
	public boolean confirmedCounter(NodeReply reply) {
		if (!this.quarantines.get(reply.node()).isOn()) {
			return true;
		}
		Object raw = AcquireReply.marker(reply.value());
		if (AcquireReply.isUnreadable(raw)) {
			// a marker this client may not read: counters are taken as they are
			return true;
		}
		NodeMarker marker = NodeMarker.parse(raw);
		return marker != null && (marker.countersOk() || marker.nonce().equals(AcquireReply.generation(reply.value())));
	}

}
