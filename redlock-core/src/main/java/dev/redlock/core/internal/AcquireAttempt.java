package dev.redlock.core.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.LockNotAcquiredException.Reason;
import dev.redlock.core.QuarantineReason;
import dev.redlock.core.internal.protocol.AcquireReply;
import dev.redlock.core.internal.protocol.RawArgument;
import dev.redlock.core.internal.round.NodeReply;

/**
 * The result of one acquisition round: won or not, with what each node said, for the
 * lease or for the failure that names the nodes.
 *
 * @param group the nodes
 * @param won whether the lock was won: a quorum granted it with validity left (and
 * confirmed the token, if fenced)
 * @param value the lock value written
 * @param token the fencing token, 0 for none
 * @param writtenTo the nodes the round wrote to, one bit per node index
 * @param answeredLate the nodes whose reply the round left to their late-reply thread,
 * one bit per node index
 * @param replies what each node said
 * @param granted how many nodes granted the lock and count
 * @param start ticker reading at the start of the round
 * @param end ticker reading when the round was decided
 * @param validUntil ticker reading at which the validity ends
 */
public record AcquireAttempt(NodeGroup group, boolean won, RawArgument value, long token, long writtenTo,
		long answeredLate, NodeReply[] replies, int granted, long start, long end, long validUntil) {

	/**
	 * Whether a node's reply grants the lock ({@link AcquireReply#grants}).
	 * @param fenced whether a fenced acquisition was sent
	 */
	public static boolean isGrant(NodeReply reply, boolean fenced) {
		return reply.isDefinite() && AcquireReply.grants(reply.value(), fenced);
	}

	/**
	 * Whether a node's reply refuses the lock, leaving nothing of ours there
	 * ({@link AcquireReply#refuses}).
	 */
	public static boolean isRefusal(NodeReply reply) {
		return reply.isDefinite() && AcquireReply.refuses(reply.value());
	}

	/**
	 * Whether the node may hold the value an acquisition wrote, with nothing sent yet to
	 * remove it: it was written, not refused (nor answered {@code NOSCRIPT} or a
	 * redirection: nothing ran), and no follow-up went behind it.
	 * @return {@code true} if a clean-up must still reach the node
	 */
	public static boolean mayHoldValue(NodeReply reply) {
		return reply.written() && !reply.followedUp() && !isRefusal(reply) && !ranNothing(reply);
	}

	/**
	 * Whether the reply says nothing ran on the node: it lacked the script called by its
	 * digest, or, a cluster node, redirected the command to another.
	 */
	public static boolean ranNothing(NodeReply reply) {
		return reply.isNoScript() || reply.redirection() != null;
	}

	/**
	 * Whether this lost round was a split vote: some nodes granted it and others had the
	 * lock taken, so other contenders took part of the nodes at the same moment and may
	 * all have lost.
	 */
	public boolean splitVote() {
		if (this.won || this.granted == 0) {
			return false;
		}
		for (NodeReply reply : this.replies) {
			if (reply != null && isRefusal(reply)) {
				return true;
			}
		}
		return false;
	}

	/** Why the lock was not won, as the exception the caller gets. */
	public LockNotAcquiredException failure(String resource, int attempts, Duration waited) {
		List<String> taken = new ArrayList<>();
		List<String> failed = new ArrayList<>();
		for (NodeReply reply : this.replies) {
			if (reply == null || reply.kind() == NodeReply.Kind.NOT_AWAITED) {
				// not asked (another shard of its voter serves the key), or not waited
				// for
				continue;
			}
			String node = this.group.nodes().get(reply.node()).redacted();
			Duration quarantined = this.group.quarantine(reply.node()).remaining();
			if (isRefusal(reply)) {
				taken.add(node);
			}
			else if (reply.kind() != NodeReply.Kind.REPLIED) {
				failed.add(node + " (" + reply.describeFailure() + ")");
			}
			else if (AcquireReply.grant(reply.value()) < 0) {
				failed.add(node + " (its fencing counter is not a count)");
			}
			else if (!quarantined.isZero()) {
				QuarantineReason why = this.group.quarantine(reply.node()).reason();
				failed.add(node + " (in quarantine for another " + quarantined.toMillis() + " ms: "
						+ ((why != null) ? why.words() : "restart") + ")");
			}
		}
		Reason reason;
		if (this.group.quorum().reached(this.granted)) {
			reason = Reason.VALIDITY_EXHAUSTED;
		}
		else if (this.group.quorum().lost(taken.size())) {
			reason = Reason.CONTENDED;
		}
		else {
			reason = Reason.NO_QUORUM;
		}
		return new LockNotAcquiredException(resource, reason, attempts, waited, taken, failed, null);
	}

}
