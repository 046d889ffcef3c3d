package dev.redlock.core;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds losses of data and failovers through one node's {@link NodeMarker marker}, read
 * in every acquisition's round and on every new connection: a node whose marker is gone
 * counts in no round until a new one is written (by the next connection's greeting, which
 * this asks for), and a marker whose {@code countsFrom} lies ahead of the node's clock
 * quarantines the node until then, whichever client wrote it.
 */
final class MarkerWatch {

	private static final Logger logger = LoggerFactory.getLogger(MarkerWatch.class);

	private final Quarantining quarantine;

	private final AtomicBoolean repairing = new AtomicBoolean();

	private volatile @Nullable String generation;

	/** The marker last read and parsed: the same bytes, round after round. */
	private volatile @Nullable ReadMarker lastRead;

	private volatile boolean unreadableLogged;

	private volatile Runnable repair = () -> {
	};

	private volatile Consumer<NodeMarker> reseed = (marker) -> {
	};

	MarkerWatch(Quarantining quarantine) {
		this.quarantine = quarantine;
	}

	/**
	 * Sets how a new marker gets written: by opening a connection, whose greeting writes
	 * it.
	 * @param repair runs in the background, and calls {@link #repairEnded()} when done
	 */
	void repairWith(Runnable repair) {
		this.repair = repair;
	}

	/**
	 * Sets how the fencing counters of a node whose marker says they are pending get
	 * re-seeded.
	 * @param reseed runs in the background
	 */
	void reseedWith(Consumer<NodeMarker> reseed) {
		this.reseed = reseed;
	}

	/**
	 * Judges the marker a round read together with a node's grant.
	 * @param raw the marker as the script returned it: its value, {@code null} when it
	 * was gone, {@code -} when this client may not read it
	 * @param nodeMillis the node's clock when it was read
	 * @param nowNanos a local monotonic reading from after it was read
	 * @return whether the grant may count
	 */
	boolean admits(@Nullable Object raw, long nodeMillis, long nowNanos) {
		if (!this.quarantine.isOn()) {
			return true;
		}
		if (raw instanceof byte[] bytes && bytes.length == 1 && bytes[0] == '-') {
			unreadable();
			return true;
		}
		NodeMarker marker = parse(raw);
		if (marker == null) {
			if (this.generation != null) {
				this.quarantine.quarantine(QuarantineReason.DATA_LOSS, nowNanos + this.quarantine.quarantineNanos(),
						"its marker key " + NodeMarker.KEY + " is gone");
			}
			requestRepair();
			return false;
		}
		return observe(marker, nodeMillis, nowNanos);
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
	 * Takes note of a marker: quarantines the node until its {@code countsFrom}.
	 * @return whether the node counts by it now
	 */
	boolean observe(NodeMarker marker, long nodeMillis, long nowNanos) {
		String previous = this.generation;
		this.generation = marker.nonce();
		if (!marker.countersOk()) {
			this.reseed.accept(marker);
		}
		long aheadMillis = marker.countsFromMillis() - nodeMillis;
		QuarantineReason reason = marker.quarantineReason();
		if (aheadMillis > 0 && reason != null) {
			this.quarantine.quarantine(reason, nowNanos + TimeUnit.MILLISECONDS.toNanos(aheadMillis),
					"its marker says it counts again in " + aheadMillis + " ms");
			return false;
		}
		if (previous != null && !previous.equals(marker.nonce())) {
			logger.warn("Redis node {} has a new marker ({}): its old one was gone, and it counts again since the "
					+ "restart quarantine has passed", this.quarantine.node(), marker.reason());
		}
		return true;
	}

	/**
	 * This client may not read the marker (an ACL user without {@code ~{fence}*}): losses
	 * of data and failovers go unseen on this node, which is said once.
	 */
	void unreadable() {
		if (!this.unreadableLogged) {
			this.unreadableLogged = true;
			logger.warn("Redis node {} does not let this client read its marker key {}: losses of data (FLUSHALL, "
					+ "eviction) and failovers there cannot be detected; allow the user ~{}* (as fencing needs)",
					this.quarantine.node(), NodeMarker.KEY, NodeMarker.KEY);
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
	void repairEnded() {
		this.repairing.set(false);
	}

	private record ReadMarker(byte[] raw, NodeMarker marker) {
	}

}
