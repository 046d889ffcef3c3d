package dev.redlock.core.internal.transport;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.protocol.LockCommands;
import dev.redlock.core.internal.protocol.LockScripts;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * The first exchange on a new connection, in one round trip: the questions a
 * {@link GreetingListener} asks (what the server says about itself, for the restart
 * quarantine), whether the server has native commands for the lock's compare-and-delete
 * ({@link LockCommands}), and the lock scripts loaded, once per connection, not per lock.
 * With the scripts loaded, a release, an extension or a fenced acquisition is answered by
 * {@code EVALSHA} at once, so it can return as soon as a quorum confirms it. When the
 * listener has a command to send after the answers (a marker to write), a second round
 * trip sends it. A server that refuses a question (renamed command, ACL) or
 * {@code SCRIPT} is still used; one that wants a password we did not give
 * ({@code NOAUTH}) is an authentication failure.
 */
final class NodeGreeting {

	private NodeGreeting() {
	}

	/**
	 * Greets the server on a new connection.
	 * @param connection the connection, just opened
	 * @param roundTrip told how long the exchange took: it measures a node that rounds
	 * have stopped waiting for
	 * @param listener what to ask, and who hears the answers
	 * @param commands told what the node runs a lock's compare-and-delete with
	 * @throws AuthenticationFailedException if the server wants a password
	 */
	static void exchange(PipelinedConnection connection, LongConsumer roundTrip, GreetingListener listener,
			NodeCommands commands) {
		GreetingListener.Conversation conversation = listener.started();
		List<CommandArguments> questions = conversation.questions();
		long sent = System.nanoTime();
		questions.forEach(connection::send);
		connection.send(LockCommands.QUESTION);
		for (LockScripts.Script script : LockScripts.CACHED) {
			connection.send(new CommandArguments(Command.SCRIPT).add("LOAD").add(script.source()));
		}
		connection.flushNow();
		List<@Nullable Object> replies = new ArrayList<>(questions.size());
		for (int i = 0; i < questions.size(); i++) {
			replies.add(readOrError(connection));
			if (i == 0) {
				roundTrip.accept(System.nanoTime() - sent);
				if (replies.get(0) instanceof JedisDataException refused
						&& String.valueOf(refused.getMessage()).startsWith("NOAUTH")) {
					throw new AuthenticationFailedException("authentication failed: " + refused.getMessage(), refused);
				}
			}
		}
		LockCommands found = LockCommands.fromCommandInfo(readOrError(connection));
		String scriptsRefused = null;
		for (int i = 0; i < LockScripts.CACHED.size(); i++) {
			// SCRIPT refused: EVALSHA falls back to EVAL on NOSCRIPT; a user without
			// scripting can still lock where the server has the native commands
			if (readOrError(connection) instanceof JedisDataException refused
					&& String.valueOf(refused.getMessage()).startsWith("NOPERM")) {
				scriptsRefused = refused.getMessage();
			}
		}
		commands.greeted(found, scriptsRefused);
		connection.greeted(found, commands);
		CommandArguments followUp = conversation.answered(replies);
		if (followUp != null) {
			connection.send(followUp);
			connection.flushNow();
			conversation.followUpAnswered(readOrError(connection));
		}
	}

	private static @Nullable Object readOrError(PipelinedConnection connection) {
		try {
			return connection.readReply();
		}
		catch (JedisDataException ex) {
			return ex;
		}
	}

}
