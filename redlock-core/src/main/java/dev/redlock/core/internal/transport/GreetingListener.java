package dev.redlock.core.internal.transport;

import java.util.List;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.CommandArguments;

/**
 * What a new connection's {@link NodeGreeting greeting} asks the server besides loading
 * the lock scripts, and who hears the answers: the restart quarantine, which the
 * transport does not know.
 */
public interface GreetingListener {

	/**
	 * A greeting starts on a new connection.
	 * @return what it asks, and who hears the answers
	 */
	Conversation started();

	/** One greeting's questions and answers. */
	interface Conversation {

		/**
		 * The commands to send, at least one: the reply to the first also tells whether
		 * the server wants a password we did not give.
		 */
		List<CommandArguments> questions();

		/**
		 * Told the replies.
		 * @param replies one per question, an error reply as its
		 * {@link redis.clients.jedis.exceptions.JedisDataException}
		 * @return a command to send after them, {@code null} for none
		 */
		@Nullable CommandArguments answered(List<@Nullable Object> replies);

		/**
		 * Told the reply to the command {@link #answered} returned.
		 * @param reply its reply, an error reply as its
		 * {@link redis.clients.jedis.exceptions.JedisDataException}
		 */
		void followUpAnswered(@Nullable Object reply);

	}

}
