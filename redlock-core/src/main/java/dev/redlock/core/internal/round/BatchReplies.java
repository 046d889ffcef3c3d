package dev.redlock.core.internal.round;

import java.util.List;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Reads a node's reply to a batch round ({@link RoundCommand#batch}): one list with an
 * answer per call, an error reply standing in the place of the call it answers.
 */
public final class BatchReplies {

	private BatchReplies() {
	}

	/**
	 * One call's part of a node's reply to a batch, as the node would have answered that
	 * call alone: its answer, or its error reply as a failure; a round trip that failed
	 * or was not waited for fails or waits for every call alike.
	 * @param reply the node's reply to the whole batch, {@code null} if not asked
	 * @param part the call's index in the batch
	 * @param parts how many calls the batch had
	 */
	public static @Nullable NodeReply part(@Nullable NodeReply reply, int part, int parts) {
		if (reply == null || reply.kind() != NodeReply.Kind.REPLIED) {
			return reply;
		}
		if (!(reply.value() instanceof List<?> answers) || answers.size() != parts) {
			return NodeReply.failed(reply.node(),
					new JedisDataException("a batch of " + parts + " calls was not answered call by call"),
					reply.nanos());
		}
		Object answer = answers.get(part);
		return (answer instanceof JedisDataException error) ? NodeReply.failed(reply.node(), error, reply.nanos())
				: NodeReply.replied(reply.node(), answer, reply.nanos());
	}

	/**
	 * The replies as the listeners hear of them: a node that answered with an error
	 * reply, to any call, failed the request (as a lone call answered so fails).
	 */
	public static NodeReply[] asEvents(NodeReply[] replies) {
		NodeReply[] events = replies.clone();
		for (int i = 0; i < events.length; i++) {
			JedisDataException error = errorIn(events[i]);
			if (error != null) {
				events[i] = NodeReply.failed(events[i].node(), error, events[i].nanos());
			}
		}
		return events;
	}

	private static @Nullable JedisDataException errorIn(@Nullable NodeReply reply) {
		if (reply != null && reply.kind() == NodeReply.Kind.REPLIED && reply.value() instanceof List<?> answers) {
			for (Object answer : answers) {
				if (answer instanceof JedisDataException error) {
					return error;
				}
			}
		}
		return null;
	}

	/**
	 * Whether a node's reply confirms one call of the batch: the script answered 1 for
	 * it. A reply that is not a list of one answer per call confirms none.
	 */
	public static boolean confirms(@Nullable NodeReply reply, int part, int parts) {
		return reply != null && reply.kind() == NodeReply.Kind.REPLIED && reply.value() instanceof List<?> answers
				&& answers.size() == parts && answers.get(part) instanceof Long count && count > 0;
	}

}
