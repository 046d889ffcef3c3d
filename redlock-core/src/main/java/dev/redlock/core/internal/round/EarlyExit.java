package dev.redlock.core.internal.round;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.CommandArguments;

/**
 * Decides when a {@link Fanout} round may stop waiting for the nodes that have not
 * answered yet, and what becomes of them.
 */
public interface EarlyExit {

	/**
	 * Whether the replies read so far settle the round.
	 * @param replies the replies read so far, {@code null} for nodes not read (yet) or
	 * not asked
	 * @return {@code true} to stop waiting for the others
	 */
	boolean settled(NodeReply[] replies);

	/**
	 * Told of the replies read while the round waited for a node's replicas
	 * ({@code WAIT}), as each was read, before {@link #settled} is asked again: what a
	 * reply tells only as it is read (a clock reading) is taken in here.
	 * @param replies the replies read so far
	 */
	default void readMeanwhile(NodeReply[] replies) {
	}

	/**
	 * What to send, without waiting for its reply, to the nodes whose reply is not
	 * awaited.
	 * @param replies the replies that settled the round
	 * @return the command, or {@code null} for none (the default)
	 */
	default @Nullable CommandArguments toNotAwaited(NodeReply[] replies) {
		return null;
	}

	/**
	 * Told, on the node's late-reply thread, how a node not awaited answered in the end.
	 * Whatever it throws is logged; the connection is closed unless every reply it owed
	 * was read.
	 * @param reply its reply, or its timeout or failure
	 * @param followUp the reply to the follow-up, or its failure; {@code null} when none
	 * was written
	 */
	void lateReply(NodeReply reply, @Nullable NodeReply followUp);

}
