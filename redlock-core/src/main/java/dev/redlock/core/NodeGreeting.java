package dev.redlock.core;

import java.util.Map;
import java.util.function.LongConsumer;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * The first exchange on a new connection, in one round trip: the server's {@code run_id}
 * and uptime ({@code INFO server}), for the restart quarantine, and the release and
 * extension scripts loaded, once per connection, not per lock. With the scripts loaded, a
 * release or an extension is answered by {@code EVALSHA} at once, so it can return as
 * soon as a quorum confirms it (a {@code NOSCRIPT} would make it wait for every node,
 * then try again). A server that refuses {@code INFO} (renamed command, ACL) or
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
	 * @return the server's {@code INFO} fields, empty if it refused the command
	 * @throws AuthenticationFailedException if the server wants a password
	 */
	static Map<String, String> exchange(PipelinedConnection connection, LongConsumer roundTrip) {
		long sent = System.nanoTime();
		connection.send(new CommandArguments(Command.INFO).add("server"));
		for (LockScripts.Script script : LockScripts.CACHED) {
			connection.send(new CommandArguments(Command.SCRIPT).add("LOAD").add(script.source()));
		}
		connection.flushNow();
		Map<String, String> info;
		try {
			Object reply = connection.readReply();
			roundTrip.accept(System.nanoTime() - sent);
			info = (reply instanceof byte[] bytes) ? InfoReply.parse(bytes) : Map.of();
		}
		catch (JedisDataException ex) {
			if (String.valueOf(ex.getMessage()).startsWith("NOAUTH")) {
				throw new AuthenticationFailedException("authentication failed: " + ex.getMessage(), ex);
			}
			info = Map.of();
		}
		for (int i = 0; i < LockScripts.CACHED.size(); i++) {
			try {
				connection.readReply();
			}
			catch (JedisDataException ex) {
				// SCRIPT refused: EVALSHA falls back to EVAL on NOSCRIPT
			}
		}
		return info;
	}

}
