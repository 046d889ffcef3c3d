package dev.redlock.core;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * What a round writes to each node and reads back: one command, or a few written together
 * (pipelined: the node runs them in order, though not atomically) whose replies read as
 * one list. A compound costs the round no extra round trip.
 */
final class RoundCommand {

	private final CommandArguments[] parts;

	private RoundCommand(CommandArguments[] parts) {
		this.parts = parts;
	}

	/** One command. */
	static RoundCommand of(CommandArguments command) {
		return new RoundCommand(new CommandArguments[] { command });
	}

	/**
	 * Commands written together, whose replies read as a list; an error reply to a later
	 * one stands in the list, an error reply to the first fails the whole (once every
	 * reply is read, so the connection owes nothing).
	 */
	static RoundCommand pipelined(CommandArguments... parts) {
		return new RoundCommand(parts);
	}

	/** Buffers the command's parts on the connection, to be flushed by the caller. */
	void writeTo(PipelinedConnection connection) {
		for (CommandArguments part : this.parts) {
			connection.send(part);
		}
	}

	/**
	 * Reads the reply, or the list of replies of a compound.
	 * @throws JedisDataException for an error reply to the (first) command
	 */
	@Nullable Object readFrom(PipelinedConnection connection) {
		if (this.parts.length == 1) {
			return connection.readReply();
		}
		List<@Nullable Object> replies = new ArrayList<>(this.parts.length);
		JedisDataException first = null;
		for (int i = 0; i < this.parts.length; i++) {
			try {
				replies.add(connection.readReply());
			}
			catch (JedisDataException ex) {
				replies.add(ex);
				if (i == 0) {
					first = ex;
				}
			}
		}
		if (first != null) {
			throw first;
		}
		return replies;
	}

}
