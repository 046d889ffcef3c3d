package dev.redlock.core.internal.round;

import org.jspecify.annotations.Nullable;

/**
 * The majority rule of the algorithm, in one place: of {@code N} nodes, {@code N/2 + 1}
 * must agree, so any two quorums share a node, and {@code N - quorum} nodes may fail, be
 * slow or have forgotten without changing an outcome. Built once per {@code Redlock};
 * nothing is allocated per round.
 */
public final class Quorum {

	private final int nodes;

	private final int size;

	/**
	 * @param nodes how many nodes vote, at least one
	 */
	public Quorum(int nodes) {
		if (nodes < 1) {
			throw new IllegalArgumentException("a quorum needs at least one node, not " + nodes);
		}
		this.nodes = nodes;
		this.size = sizeOf(nodes);
	}

	/** How many of so many nodes make a quorum: {@code N/2 + 1}. */
	static int sizeOf(int nodes) {
		return nodes / 2 + 1;
	}

	/**
	 * How many of so many nodes may be down, slow or left out while a quorum can still
	 * agree: {@code N - quorum}.
	 */
	public static int toleratedOf(int nodes) {
		return nodes - sizeOf(nodes);
	}

	/** How many nodes vote. */
	public int nodes() {
		return this.nodes;
	}

	/** How many nodes make a quorum: {@code N/2 + 1}. */
	public int size() {
		return this.size;
	}

	/**
	 * How many nodes may be down, slow, refusing or forgetful while a quorum can still
	 * agree: {@code N - quorum}.
	 */
	public int tolerated() {
		return toleratedOf(this.nodes);
	}

	/**
	 * The fewest nodes whose refusal leaves no quorum possible: {@code N - quorum + 1}.
	 * So many nodes also hold a member of every quorum.
	 */
	public int denying() {
		return this.nodes - this.size + 1;
	}

	/** Whether so many agreeing nodes are a quorum. */
	public boolean reached(int agreeing) {
		return agreeing >= this.size;
	}

	/** Whether so many refusing nodes leave no quorum possible. */
	public boolean lost(int refusing) {
		return refusing >= denying();
	}

	/** Whether a round's outcome is known: a quorum agreed, or no quorum can. */
	public boolean settled(int agreeing, int refusing) {
		return reached(agreeing) || lost(refusing);
	}

	/**
	 * Whether the replies read so far settle a round, each counted by a vote.
	 * @param replies the replies read so far, {@code null} for nodes not read (yet) or
	 * not asked
	 * @param vote how a reply counts
	 */
	public boolean settledBy(@Nullable NodeReply[] replies, Vote vote) {
		int agreeing = 0;
		int refusing = 0;
		for (NodeReply reply : replies) {
			byte counted = (reply != null) ? vote.of(reply) : Vote.NOT_YET;
			if (counted == Vote.AGREES) {
				agreeing++;
			}
			else if (counted == Vote.REFUSES) {
				refusing++;
			}
		}
		return settled(agreeing, refusing);
	}

	/**
	 * How many replies agree by a vote.
	 * @param replies the replies, {@code null} for nodes not read or not asked
	 */
	public int agreeing(@Nullable NodeReply[] replies, Vote vote) {
		int agreeing = 0;
		for (NodeReply reply : replies) {
			if (reply != null && vote.of(reply) == Vote.AGREES) {
				agreeing++;
			}
		}
		return agreeing;
	}

	@Override
	public String toString() {
		return this.size + " of " + this.nodes;
	}

	/**
	 * How one node's reply counts towards a round's quorum. A round's exit usually
	 * implements it, so that a tally allocates nothing.
	 */
	public interface Vote {

		/**
		 * The reply is not an answer yet (the node is asked again, or may still count).
		 */
		byte NOT_YET = 0;

		/** The node agrees: it granted or confirmed, and counts. */
		byte AGREES = 1;

		/** The node answered, and its answer does not count. */
		byte REFUSES = 2;

		/**
		 * @return {@link #AGREES}, {@link #REFUSES} or {@link #NOT_YET}
		 */
		byte of(NodeReply reply);

	}

}
