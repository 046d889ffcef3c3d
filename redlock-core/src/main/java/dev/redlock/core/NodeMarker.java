package dev.redlock.core;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.HexFormat;

import org.jspecify.annotations.Nullable;

/**
 * The small key without TTL that every client of a node reads in each acquisition's round
 * ({@value #KEY}), and that tells them whether the node may have forgotten locks: its
 * value is {@code <countsFrom> <reason> <nonce> <promotedFrom>}, where {@code countsFrom}
 * is the node's own wall-clock time (ms) from which the node counts towards a quorum
 * again, {@code reason} why it was written ({@code clean} when nothing was lost, else a
 * {@link QuarantineReason#tag()}), {@code nonce} is random (its generation: fencing
 * counters record the generation that last confirmed them), and {@code promotedFrom} is
 * the replication id of the master the node replaced, or {@code -}.
 *
 * <p>
 * A marker that is gone means the node lost data (or never had one): the node does not
 * count until a new one is written, by whichever client sees it missing, with
 * {@code countsFrom} a restart quarantine later unless the node can show it lost nothing.
 * Every client then waits out the same quarantine, also one that never saw the marker
 * missing. The key {@code {fence}} can be neither a lock key (lock keys starting with it
 * are refused) nor a fencing counter (those are {@code {fence}} followed by a lock key).
 *
 * @param countsFromMillis the node's wall-clock time from which it counts
 * @param reason {@code clean} or a quarantine reason's tag
 * @param nonce the marker's generation
 * @param promotedFrom the replication id of the master the node replaced, or {@code -}
 * @param countersOk whether the node's fencing counters can be trusted whatever
 * generation they record
 */
record NodeMarker(long countsFromMillis, String reason, String nonce, String promotedFrom, boolean countersOk) {

	/** The marker's key on every node. */
	static final String KEY = LockScripts.FENCE_KEY_PREFIX;

	static final String CLEAN = "clean";

	static final String NOT_PROMOTED = "-";

	static final String COUNTERS_OK = "ok";

	static final String COUNTERS_PENDING = "pending";

	private static final SecureRandom RANDOM = new SecureRandom();

	/**
	 * A new marker with a fresh nonce.
	 * @param countsFromMillis the node's time from which it counts; 0 when it lost
	 * nothing
	 * @param reason why it is written; {@code null} when it lost nothing
	 * @param promotedFrom the replication id of the master it replaced, or {@code -}
	 */
	static NodeMarker create(long countsFromMillis, @Nullable QuarantineReason reason, String promotedFrom) {
		byte[] nonce = new byte[8];
		RANDOM.nextBytes(nonce);
		return new NodeMarker(countsFromMillis, (reason != null) ? reason.tag() : CLEAN,
				HexFormat.of().formatHex(nonce), promotedFrom, reason == null);
	}

	/**
	 * Reads a marker from a reply.
	 * @param reply the value of the key, as Redis returned it
	 * @return the marker, or {@code null} when there is none or it cannot be read
	 */
	static @Nullable NodeMarker parse(@Nullable Object reply) {
		if (!(reply instanceof byte[] bytes)) {
			return null;
		}
		String[] parts = new String(bytes, StandardCharsets.UTF_8).split(" ");
		if (parts.length != 4 && parts.length != 5) {
			return null;
		}
		try {
			boolean countersOk = (parts.length == 5) ? COUNTERS_OK.equals(parts[4]) : CLEAN.equals(parts[1]);
			return new NodeMarker(Long.parseLong(parts[0]), parts[1], parts[2], parts[3], countersOk);
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	/** The same marker, its counters re-seeded. */
	NodeMarker withCountersOk() {
		return new NodeMarker(this.countsFromMillis, this.reason, this.nonce, this.promotedFrom, true);
	}

	/** The value as stored. */
	String encode() {
		return this.countsFromMillis + " " + this.reason + " " + this.nonce + " " + this.promotedFrom + " "
				+ (this.countersOk ? COUNTERS_OK : COUNTERS_PENDING);
	}

	/** Whether it was written without any loss known. */
	boolean clean() {
		return CLEAN.equals(this.reason);
	}

	/** The reason the node was quarantined when it was written; {@code null} if clean. */
	@Nullable QuarantineReason quarantineReason() {
		for (QuarantineReason candidate : QuarantineReason.values()) {
			if (candidate.tag().equals(this.reason)) {
				return candidate;
			}
		}
		return clean() ? null : QuarantineReason.DATA_LOSS;
	}

}
