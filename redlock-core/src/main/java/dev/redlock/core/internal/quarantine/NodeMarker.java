package dev.redlock.core.internal.quarantine;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.HexFormat;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.QuarantineReason;
import dev.redlock.core.internal.protocol.LockScripts;

/**
 * The small key without TTL that every client of a node reads in each acquisition's round
 * ({@value #KEY}), and that tells them whether the node may have forgotten locks. Its
 * value is
 * {@code <countsFrom> <reason> <nonce> <promotedFrom> <counters> <epoch> <evidence>}:
 * <ul>
 * <li>{@code countsFrom}: the node's own wall-clock time (ms) from which it counts
 * towards a quorum again;</li>
 * <li>{@code reason}: why it was written ({@code clean} when nothing was lost, else a
 * {@link QuarantineReason#tag()});</li>
 * <li>{@code nonce}: random, its generation: written anew when the node lost data, and
 * recorded by fencing counters that a quorum confirmed;</li>
 * <li>{@code promotedFrom}: the replication id of the master the node replaced, or
 * {@code -};</li>
 * <li>{@code counters}: {@code ok} once the node's fencing counters can be trusted
 * whatever generation they record, else {@code pending};</li>
 * <li>{@code epoch}: rises with every write of the marker, heartbeats included (at least
 * the node's time in ms at the write): a node that shows a lower epoch than a client saw
 * went back to an older state;</li>
 * <li>{@code evidence}: {@code <run_id>:<losses>}, the node's count of events that drop
 * keys since its start (calls of {@code FLUSHALL}, {@code FLUSHDB}, {@code SWAPDB},
 * {@code DEBUG} and evicted keys) when the marker was written; a node that shows more now
 * lost keys since.</li>
 * </ul>
 * The marker of an earlier version has only the first four or five fields (epoch 0, no
 * evidence); the first heartbeat writes them in.
 *
 * <p>
 * A marker that is gone means the node lost data (or never had one): the node does not
 * count until a new one is written, by whichever client sees it missing, with
 * {@code countsFrom} a restart quarantine later unless the node can show it lost nothing.
 * Every client then waits out the same quarantine, also one that never saw the marker
 * missing. Every write is a compare-and-set ({@link LockScripts#WRITE_MARKER}), which
 * also sets the epoch on the node, so no client ever writes over a marker it did not
 * read. The key {@code {fence}} can be neither a lock key (lock keys starting with it are
 * refused) nor a fencing counter (those are {@code {fence}} followed by a lock key).
 *
 * @param countsFromMillis the node's wall-clock time from which it counts
 * @param reason {@code clean} or a quarantine reason's tag
 * @param nonce the marker's generation
 * @param promotedFrom the replication id of the master the node replaced, or {@code -}
 * @param countersOk whether the node's fencing counters can be trusted whatever
 * generation they record
 * @param epoch rises with every write; 0 for a marker of an earlier version
 * @param evidence {@code <run_id>:<losses>} when written, or {@code -}
 */
public record NodeMarker(long countsFromMillis, String reason, String nonce, String promotedFrom, boolean countersOk,
		long epoch, String evidence) {

	/** The marker's key on every node. */
	public static final String KEY = LockScripts.FENCE_KEY_PREFIX;

	static final String CLEAN = "clean";

	static final String NOT_PROMOTED = "-";

	static final String NO_EVIDENCE = "-";

	static final String COUNTERS_OK = "ok";

	static final String COUNTERS_PENDING = "pending";

	private static final SecureRandom RANDOM = new SecureRandom();

	/**
	 * A new marker with a fresh nonce, its epoch left to the write.
	 * @param countsFromMillis the node's time from which it counts; 0 when it lost
	 * nothing
	 * @param reason why it is written; {@code null} when it lost nothing
	 * @param promotedFrom the replication id of the master it replaced, or {@code -}
	 * @param evidence what the node shows of its losses, or {@code -}
	 */
	static NodeMarker create(long countsFromMillis, @Nullable QuarantineReason reason, String promotedFrom,
			String evidence) {
		return new NodeMarker(countsFromMillis, (reason != null) ? reason.tag() : CLEAN, newNonce(), promotedFrom,
				reason == null, 0, evidence);
	}

	/** A random generation. */
	static String newNonce() {
		byte[] nonce = new byte[8];
		RANDOM.nextBytes(nonce);
		return HexFormat.of().formatHex(nonce);
	}

	/**
	 * Reads a marker from a reply.
	 * @param reply the value of the key, as Redis returned it
	 * @return the marker, or {@code null} when there is none or it cannot be read
	 */
	public static @Nullable NodeMarker parse(@Nullable Object reply) {
		if (!(reply instanceof byte[] bytes)) {
			return null;
		}
		String[] parts = new String(bytes, StandardCharsets.UTF_8).split(" ");
		if (parts.length != 4 && parts.length != 5 && parts.length != 7) {
			return null;
		}
		try {
			boolean countersOk = (parts.length >= 5) ? COUNTERS_OK.equals(parts[4]) : CLEAN.equals(parts[1]);
			long epoch = (parts.length == 7) ? Long.parseLong(parts[5]) : 0;
			String evidence = (parts.length == 7) ? parts[6] : NO_EVIDENCE;
			return new NodeMarker(Long.parseLong(parts[0]), parts[1], parts[2], parts[3], countersOk, epoch, evidence);
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	/** The fields a write sets as given: all but the epoch and the evidence. */
	String head() {
		return this.countsFromMillis + " " + this.reason + " " + this.nonce + " " + this.promotedFrom + " "
				+ (this.countersOk ? COUNTERS_OK : COUNTERS_PENDING);
	}

	/** The value as stored. */
	String encode() {
		return head() + " " + this.epoch + " " + this.evidence;
	}

	/** The same marker with other evidence: a heartbeat. */
	NodeMarker withEvidence(String evidence) {
		return new NodeMarker(this.countsFromMillis, this.reason, this.nonce, this.promotedFrom, this.countersOk,
				this.epoch, evidence);
	}

	/**
	 * The same marker, on a node that replaced the master of the given replication id.
	 */
	NodeMarker afterPromotion(String replicationId, String evidence) {
		return new NodeMarker(this.countsFromMillis, this.reason, this.nonce, replicationId, this.countersOk,
				this.epoch, evidence);
	}

	/** The same marker counting from another time, with other evidence. */
	NodeMarker countingFrom(long countsFromMillis, String evidence) {
		return new NodeMarker(countsFromMillis, this.reason, this.nonce, this.promotedFrom, this.countersOk, this.epoch,
				evidence);
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
