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

	/** The command, when there is one: most rounds send one, with no array around it. */
	private final @Nullable CommandArguments single;

	private final CommandArguments @Nullable [] parts;

	/** How the parts' replies are read. */
	private final Shape shape;

	private RoundCommand(@Nullable CommandArguments single, CommandArguments @Nullable [] parts, Shape shape) {
		this.single = single;
		this.parts = parts;
		this.shape = shape;
	}

	/** One command. */
	static RoundCommand of(CommandArguments command) {
		return new RoundCommand(command, null, Shape.PIPELINED);
	}

	/**
	 * Commands written together, whose replies read as a list; an error reply to a later
	 * one stands in the list, an error reply to the first fails the whole (once every
	 * reply is read, so the connection owes nothing).
	 */
	static RoundCommand pipelined(CommandArguments... parts) {
		return new RoundCommand(null, parts, Shape.PIPELINED);
	}

	/**
	 * Many commands written together, each on its own: their replies read as a list in
	 * which an error reply to any of them stands in its place. The round trip does not
	 * count as the node's latency: a node takes longer to run many commands than one, and
	 * the rounds of single locks must not take it for a slow node.
	 */
	static RoundCommand batch(List<CommandArguments> parts) {
		return new RoundCommand(null, parts.toArray(new CommandArguments[0]), Shape.BATCH);
	}

	/** Whether the round trip measures the node's latency (not for a batch). */
	boolean measuresLatency() {
		return this.shape != Shape.BATCH;
	}

	/** Buffers the command's parts on the connection, to be flushed by the caller. */
	void writeTo(PipelinedConnection connection) {
		if (this.single != null) {
			connection.send(this.single);
			return;
		}
		for (CommandArguments part : this.parts) {
			connection.send(part);
		}
	}

	/**
	 * Reads the reply, or the list of replies of a compound.
	 * @throws JedisDataException for an error reply to the first command of a compound;
	 * never for a batch
	 */
	@Nullable Object readFrom(PipelinedConnection connection) {
		if (this.single != null) {
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
				if (first == null && i == 0 && this.shape == Shape.PIPELINED) {
					first = ex;
				}
			}
		}
		if (first != null) {
			throw first;
		}
		return replies;
	}

	/** How a compound's replies are read. */
	private enum Shape {

		/** An error reply to the first command fails the whole; the others are extras. */
		PIPELINED,

		/**
		 * Every command stands on its own, and the round trip is not the node's latency.
		 */
		BATCH

	}

}
