package dev.redlock.core.internal.quarantine;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.QuarantineReason;
import dev.redlock.core.internal.protocol.AcquireReply;
import dev.redlock.core.internal.protocol.LockScripts;

/**
 * Finds losses of data, rollbacks and failovers through one node's {@link NodeMarker
 * marker}, read in every acquisition's round and by every greeting and probe, and keeps
 * what this client learnt of it: the highest epoch seen (a marker's epoch only rises, so
 * a lower one means the node went back to an older state) and the generation (a marker
 * replaced by a clean one means the old one was lost).
 *
 * <p>
 * In a round ({@link #admits}) the marker is judged as read, without any I/O: a node
 * whose marker is gone, went back, or was replaced by a clean one counts in no round, and
 * a greeting is asked for to write it down; a marker whose {@code countsFrom} lies ahead
 * of the node's clock quarantines the node until then, whichever client wrote it. A
 * greeting or a probe ({@link #inspect}) also has what the node says of itself
 * ({@link NodeReport}), and decides what to write: a new marker when it is gone, the
 * cause of a loss, a rollback or a failover (a quarantine ahead, from the node's own
 * clock, so that every client waits it out), or a heartbeat that raises the epoch and
 * records the node's evidence. What this client finds elsewhere (a clock proven off) is
 * written the same way, at the next greeting or probe.
 */
public final class MarkerWatch {

	private final Quarantining quarantine;

	private final AtomicBoolean repairing = new AtomicBoolean();

	/** What this client learnt of the marker so far. */
	private volatile Memory memory = new Memory(0, null);

	/** The marker last read and parsed: the same bytes, round after round. */
	private volatile @Nullable ReadMarker lastRead;

	/** A cause to write down at the next greeting or probe, {@code null} when none. */
	private volatile @Nullable QuarantineCause toRecord;

	private volatile boolean unreadableLogged;

	/** Whether a warning said the node could not read its marker. */
	private volatile boolean notReadLogged;

	private volatile Runnable repair = () -> {
	};

	private volatile Consumer<NodeMarker> reseed = (marker) -> {
	};

	MarkerWatch(Quarantining quarantine) {
		this.quarantine = quarantine;
	}

	/**
	 * Sets how a greeting is asked for: by opening a connection, or by a probe.
	 * @param repair runs in the background, and calls {@link #repairEnded()} when done
	 */
	public void repairWith(Runnable repair) {
		this.repair = repair;
	}

	/**
	 * Sets how the fencing counters of a node whose marker says they are pending get
	 * re-seeded.
	 * @param reseed runs in the background
	 */
	public void reseedWith(Consumer<NodeMarker> reseed) {
		this.reseed = reseed;
	}

	/**
	 * What this client has learnt of the marker so far. A round takes it before it
	 * writes, and judges the marker it reads against it: what other rounds learn
	 * meanwhile may be newer than what this one reads.
	 */
	public Memory memory() {
		return this.memory;
	}

	/**
	 * Judges the marker a round read together with a node's grant.
	 * @param raw the marker as the script returned it: its value, {@code null} when it
	 * was gone, {@code -} when this client may not read it
	 * @param nodeMillis the node's clock when it was read
	 * @param nowNanos a local monotonic reading from after it was read
	 * @param before what this client knew of the marker before the round was written
	 * @return whether the grant may count
	 */
	boolean admits(@Nullable Object raw, long nodeMillis, long nowNanos, Memory before) {
		if (!this.quarantine.isOn()) {
			return true;
		}
		if (AcquireReply.isUnreadable(raw)) {
			unreadable();
			return true;
		}
		if (AcquireReply.isNotRead(raw)) {
			notRead();
			return false;
		}
		NodeMarker marker = parse(raw);
		QuarantineCause cause = (marker != null) ? judge(marker, before) : gone(before);
		if (cause != null) {
			found(cause, nowNanos);
			requestRepair();
			return false;
		}
		if (marker == null) {
			// never written: the next greeting writes it
			requestRepair();
			return false;
		}
		return observe(marker, nodeMillis, nowNanos);
	}

	/**
	 * What a marker that is there shows, against what this client saw before: a rollback
	 * or a loss.
	 */
	private static @Nullable QuarantineCause judge(NodeMarker marker, Memory before) {
		long highest = before.epoch();
		if (marker.epoch() < highest) {
			return new QuarantineCause(QuarantineReason.ROLLBACK,
					"its marker went back from epoch " + highest + " to " + marker.epoch() + ": it runs on an older "
							+ "state (a restored snapshot, a reload of an older dump)");
		}
		return lost(marker, before);
	}

	/** What a marker replaced by a clean one shows: that the one it had was lost. */
	private static @Nullable QuarantineCause lost(NodeMarker marker, Memory before) {
		String known = before.generation();
		if (known != null && !known.equals(marker.nonce()) && marker.clean()) {
			return new QuarantineCause(QuarantineReason.DATA_LOSS,
					"its marker was replaced by a clean one: the one it had was lost");
		}
		return null;
	}

	/**
	 * What a marker that is gone shows to a greeting or a probe: a restart, when the node
	 * started less than a quarantine ago (its data went with it), else a loss if this
	 * client saw a marker before.
	 */
	private @Nullable QuarantineCause gone(NodeReport report, Memory before, long quarantineMillis) {
		if (report.uptimeSeconds() != null && !report.upFor(quarantineMillis)) {
			return new QuarantineCause(QuarantineReason.RESTART,
					"it started " + report.uptimeSeconds() + " s ago: its marker went with its data");
		}
		return gone(before);
	}

	/** What a marker that is gone shows: a loss, if this client saw one before. */
	private @Nullable QuarantineCause gone(Memory before) {
		return (before.generation() != null) ? new QuarantineCause(QuarantineReason.DATA_LOSS,
				"its marker key " + this.quarantine.markerKey() + " is gone") : null;
	}

	private void found(QuarantineCause cause, long nowNanos) {
		this.quarantine.quarantine(cause.reason(), nowNanos + this.quarantine.quarantineNanos(), cause.detail());
		record(cause);
	}

	/**
	 * Asks that a cause made elsewhere (a clock proven off the others') be written in the
	 * marker at the next greeting or probe, so that every client honours it.
	 */
	void record(QuarantineReason reason, String detail) {
		record(new QuarantineCause(reason, detail));
		requestRepair();
	}

	private void record(QuarantineCause cause) {
		QuarantineCause pending = this.toRecord;
		if (pending == null || (!pending.losesData() && cause.losesData())) {
			this.toRecord = cause;
		}
	}

	/**
	 * Decides, from what a greeting or a probe read of the node, what to write in its
	 * marker; quarantines the node for what it finds.
	 * @param report what the node said
	 * @param nowNanos a local monotonic reading from after it was read
	 * @param heartbeatMillis how old an epoch may grow before it is raised
	 * @param before what this client knew of the marker before it was read
	 * @param promoted whether the node is a promoted replica of the server this client
	 * knew, verified and trusted ({@link RestartDetector}): its promotion is written down
	 * without a quarantine
	 * @return the write, or {@code null} for none (the marker read is then taken note
	 * of); after a write, {@link #written} takes note of the marker in place
	 */
	@Nullable MarkerWrite inspect(NodeReport report, long nowNanos, long heartbeatMillis, Memory before, boolean promoted) {
		if (!this.quarantine.isOn() || report.nodeMicros() < 0) {
			// without the node's clock, no marker is written: the rounds still judge it
			return null;
		}
		if (AcquireReply.isUnreadable(report.marker())) {
			unreadable();
			return null;
		}
		if (AcquireReply.isNotRead(report.marker())) {
			// nothing learned, nothing to write: the rounds count none of its grants
			notRead();
			return null;
		}
		long nodeMillis = report.nodeMicros() / 1_000;
		long quarantineMillis = TimeUnit.NANOSECONDS.toMillis(this.quarantine.quarantineNanos());
		NodeMarker marker = NodeMarker.parse(report.marker());
		QuarantineCause cause = (marker != null) ? judge(marker, report, before, promoted)
				: gone(report, before, quarantineMillis);
		if (cause == null) {
			cause = this.toRecord;
		}
		if (cause != null && cause.reason() != QuarantineReason.RESTART) {
			// a restart is quarantined from the node's start, by the restart detector
			this.quarantine.quarantine(cause.reason(), nowNanos + this.quarantine.quarantineNanos(), cause.detail());
		}
		this.toRecord = null;
		if (marker == null) {
			return new MarkerWrite("", newMarker(cause, report, nodeMillis, quarantineMillis), cause);
		}
		String expected = new String((byte[]) report.marker(), StandardCharsets.UTF_8);
		if (cause != null) {
			boolean recordedAlready = marker.countsFromMillis() - nodeMillis >= quarantineMillis / 2
					&& cause.reason().tag().equals(marker.reason());
			if (!recordedAlready || cause.losesData()) {
				return new MarkerWrite(expected, recorded(marker, cause, report, nodeMillis + quarantineMillis), cause);
			}
		}
		if (cause == null && isNewPromotion(marker, report)) {
			// verified and trusted: written down, so that no client takes it for a
			// failover
			return new MarkerWrite(expected, marker.afterPromotion(report.promotedFrom(), report.evidence()), null);
		}
		if (marker.countsFromMillis() - nodeMillis > quarantineMillis) {
			// the node's clock went back since the marker was written: a quarantine from
			// now ends later than the one recorded, and does not wait for the clock
			return new MarkerWrite(expected, marker.countingFrom(nodeMillis + quarantineMillis, report.evidence()),
					cause);
		}
		if (nodeMillis - marker.epoch() >= heartbeatMillis || !report.evidence().equals(marker.evidence())) {
			return new MarkerWrite(expected, marker.withEvidence(report.evidence()), cause);
		}
		// nothing to write: what it says still counts
		observe(marker, nodeMillis, nowNanos);
		return null;
	}

	/**
	 * A marker that is there, against what the node says of itself. A promotion comes
	 * first: it explains a marker that went back too (the replica had an older one).
	 */
	private static @Nullable QuarantineCause judge(NodeMarker marker, NodeReport report, Memory before,
			boolean promoted) {
		if (isNewPromotion(marker, report)) {
			if (!promoted) {
				return new QuarantineCause(QuarantineReason.FAILOVER,
						"a replica was promoted in its place (it replaced the master " + report.promotedFrom() + ")");
			}
			// the replica had an older marker, not older locks: only a marker replaced
			// by a clean one still tells a loss
			return lost(marker, before);
		}
		QuarantineCause cause = judge(marker, before);
		return (cause != null) ? cause : Evidence.compare(marker.evidence(), report.evidence());
	}

	/** Whether the node replaced a master since its marker was written. */
	private static boolean isNewPromotion(NodeMarker marker, NodeReport report) {
		String promotedFrom = report.promotedFrom();
		return promotedFrom != null && !promotedFrom.equals(marker.promotedFrom());
	}

	/** The marker to write where there is none. */
	private NodeMarker newMarker(@Nullable QuarantineCause cause, NodeReport report, long nodeMillis,
			long quarantineMillis) {
		String promotedFrom = (report.promotedFrom() != null) ? report.promotedFrom() : NodeMarker.NOT_PROMOTED;
		boolean restarted = cause != null && cause.reason() == QuarantineReason.RESTART;
		if ((cause != null && !restarted) || report.promotedFrom() != null) {
			QuarantineReason reason = (cause != null) ? cause.reason() : QuarantineReason.FAILOVER;
			return NodeMarker.create(nodeMillis + quarantineMillis, reason, promotedFrom, report.evidence());
		}
		if (report.lostNothingSinceStart() && report.upFor(quarantineMillis)) {
			// never written: this version meets the node for the first time
			return NodeMarker.create(0, null, promotedFrom, report.evidence());
		}
		if (report.lostNothingSinceStart() && report.uptimeSeconds() != null) {
			// new or restarted less than a quarantine ago, nothing dropped since: what it
			// lost went with its start, and counts from a quarantine after it (its uptime
			// counted one second short, as the restart quarantine counts it)
			long startedBy = nodeMillis - Math.max(0, report.uptimeSeconds() - 1) * 1_000;
			return NodeMarker.create(startedBy + quarantineMillis, QuarantineReason.RESTART, promotedFrom,
					report.evidence());
		}
		return NodeMarker.create(nodeMillis + quarantineMillis, QuarantineReason.DATA_LOSS, promotedFrom,
				report.evidence());
	}

	/** The marker with a cause written in: a quarantine ahead, never shortened. */
	private static NodeMarker recorded(NodeMarker marker, QuarantineCause cause, NodeReport report,
			long countsFromMillis) {
		boolean lost = cause.losesData();
		String promotedFrom = (report.promotedFrom() != null) ? report.promotedFrom() : marker.promotedFrom();
		return new NodeMarker(Math.max(marker.countsFromMillis(), countsFromMillis), cause.reason().tag(),
				lost ? NodeMarker.newNonce() : marker.nonce(), promotedFrom, !lost && marker.countersOk(), 0,
				report.evidence());
	}

	/**
	 * Takes note of the marker in place after a write: the one written, or the one that
	 * replaced the one read meanwhile, in which case what was to be written down is asked
	 * for again.
	 * @param write what was written
	 * @param reply the reply of {@link LockScripts#WRITE_MARKER}
	 */
	void written(MarkerWrite write, @Nullable Object reply, long nodeMillis, long nowNanos) {
		NodeMarker marker = NodeMarker.parse(reply);
		if ((marker == null || !marker.head().equals(write.marker().head())) && write.cause() != null) {
			record(write.cause());
			requestRepair();
		}
		if (marker != null) {
			observe(marker, nodeMillis, nowNanos);
		}
	}

	private @Nullable NodeMarker parse(@Nullable Object raw) {
		ReadMarker last = this.lastRead;
		if (last != null && raw instanceof byte[] bytes && Arrays.equals(bytes, last.raw())) {
			return last.marker();
		}
		NodeMarker marker = NodeMarker.parse(raw);
		if (marker != null) {
			this.lastRead = new ReadMarker((byte[]) raw, marker);
		}
		return marker;
	}

	/**
	 * Takes note of a marker: remembers its epoch and generation, and quarantines the
	 * node until its {@code countsFrom}.
	 * @return whether the node counts by it now
	 */
	boolean observe(NodeMarker marker, long nodeMillis, long nowNanos) {
		remember(marker);
		if (!marker.countersOk()) {
			this.reseed.accept(marker);
		}
		// never more than a quarantine from now: further ahead, the node's clock went
		// back
		// since it was written, and a quarantine from now ends later than the one
		// recorded
		long aheadMillis = Math.min(marker.countsFromMillis() - nodeMillis,
				TimeUnit.NANOSECONDS.toMillis(this.quarantine.quarantineNanos()));
		QuarantineReason reason = marker.quarantineReason();
		if (aheadMillis > 0 && reason != null) {
			this.quarantine.quarantine(reason, nowNanos + TimeUnit.MILLISECONDS.toNanos(aheadMillis),
					"its marker says it counts again in " + aheadMillis + " ms");
			return false;
		}
		return true;
	}

	private synchronized void remember(NodeMarker marker) {
		Memory known = this.memory;
		if (marker.epoch() < known.epoch()
				|| (marker.epoch() == known.epoch() && marker.nonce().equals(known.generation()))) {
			return;
		}
		this.memory = new Memory(marker.epoch(), marker.nonce());
	}

	/**
	 * Whether this client found the marker unreadable: refused to its user (an ACL
	 * denial). A marker the node could not read (a cluster's slot served elsewhere) is
	 * not this: its grants count for nothing.
	 */
	public boolean foundUnreadable() {
		return this.unreadableLogged;
	}

	/**
	 * This client may not read the marker (an ACL user without {@code ~{fence}*}): losses
	 * of data and failovers go unseen on this node, which is said once.
	 */
	void unreadable() {
		if (!this.unreadableLogged) {
			this.unreadableLogged = true;
			this.quarantine.logger()
				.warn("Redis node {} does not let this client read its marker key {}: losses of data (FLUSHALL, "
						+ "eviction), rollbacks and failovers there cannot be detected; allow the user ~{}* (as "
						+ "fencing needs)", this.quarantine.node(), this.quarantine.markerKey(),
						this.quarantine.markerKey());
		}
	}

	/**
	 * The node could not read the marker (a cluster node whose marker's slot is served
	 * elsewhere, or a cluster that is down): its grants count for no quorum while so,
	 * which is said once.
	 */
	private void notRead() {
		if (!this.notReadLogged) {
			this.notReadLogged = true;
			this.quarantine.logger()
				.warn("Redis node {} could not read its marker key {} (its slot is served by another cluster node, "
						+ "or the cluster is down): its grants count towards no quorum while it cannot",
						this.quarantine.node(), this.quarantine.markerKey());
		}
	}

	private void requestRepair() {
		if (this.repairing.compareAndSet(false, true)) {
			try {
				this.repair.run();
			}
			catch (RuntimeException ex) {
				this.repairing.set(false);
				throw ex;
			}
		}
	}

	/** A repair has ended, with a new marker or not: the next missing one asks again. */
	public void repairEnded() {
		this.repairing.set(false);
	}

	private record ReadMarker(byte[] raw, NodeMarker marker) {
	}

	/**
	 * What a client learnt of a node's marker.
	 *
	 * @param epoch the highest epoch seen
	 * @param generation the generation of the marker with that epoch, {@code null} before
	 * any
	 */
	public record Memory(long epoch, @Nullable String generation) {
	}

	/**
	 * A write of a node's marker, a compare-and-set ({@link LockScripts#WRITE_MARKER}).
	 *
	 * @param expected the marker it replaces as read, empty when there is none
	 * @param marker the new marker (its epoch is set by the node)
	 * @param cause what it writes down, {@code null} for a heartbeat
	 */
	record MarkerWrite(String expected, NodeMarker marker, @Nullable QuarantineCause cause) {
	}

}
