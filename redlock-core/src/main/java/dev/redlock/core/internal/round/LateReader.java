package dev.redlock.core.internal.round;

import dev.redlock.core.internal.transport.PipelinedConnection;

/**
 * Hands a connection whose replies a {@link FanoutRound} did not wait for to its node's
 * late-reply thread, which reads what is still to come and only then gives it back.
 */
@FunctionalInterface
interface LateReader {

	/**
	 * Reads the owed replies off the caller's thread.
	 * @param node the node's index
	 * @param connection the connection that owes them
	 * @param command what was written, which reads its reply
	 * @param writtenAt when the command was written, for the node's latency
	 * @param followedUp whether the early exit's follow-up was written behind it
	 * @param exit told how the node answered
	 */
	void lateRead(int node, PipelinedConnection connection, RoundCommand command, long writtenAt, boolean followedUp,
			EarlyExit exit);

}
