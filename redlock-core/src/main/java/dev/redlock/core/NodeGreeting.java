package dev.redlock.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongConsumer;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * The first exchange on a new connection, in one round trip: what the server says about
 * itself for the {@link NodeQuarantine quarantine} (a {@link NodeReport}: {@code INFO}
 * server, replication, stats, commandstats and memory, {@code TIME}, its
 * {@link NodeMarker marker}; only {@code INFO server} with the quarantine off), and the
 * lock scripts loaded, once per connection, not per lock. With the scripts loaded, a
 * release, an extension or a fenced acquisition is answered by {@code EVALSHA} at once,
 * so it can return as soon as a quorum confirms it.
 *
 * <p>
 * When the quarantine finds something to write in the marker (it is gone, the node lost
 * data, went back, was replaced, or its epoch is due to rise), a second round trip writes
 * it, a compare-and-set. A server that refuses {@code INFO} (renamed command, ACL) or
 * {@code SCRIPT} is still used; one that wants a password we did not give
 * ({@code NOAUTH}) is an authentication failure.
 */
final class NodeGreeting {

	private static final List<CommandArguments> UNWATCHED = List.of(new CommandArguments(Command.INFO).add("server"));

	private NodeGreeting() {
	}

	/**
	 * Greets the server on a new connection.
	 * @param connection the connection, just opened
	 * @param roundTrip told how long the exchange took: it measures a node that rounds
	 * have stopped waiting for
	 * @param quarantine the node's quarantine and detectors
	 * @throws AuthenticationFailedException if the server wants a password
	 */
	static void exchange(PipelinedConnection connection, LongConsumer roundTrip, NodeQuarantine quarantine) {
		MarkerWatch.Memory before = quarantine.markers().memory();
		boolean watched = quarantine.isOn();
		List<CommandArguments> commands = watched ? NodeReport.COMMANDS : UNWATCHED;
		long sent = System.nanoTime();
		commands.forEach(connection::send);
		for (LockScripts.Script script : LockScripts.CACHED) {
			connection.send(new CommandArguments(Command.SCRIPT).add("LOAD").add(script.source()));
		}
		connection.flushNow();
		List<@Nullable Object> replies = new ArrayList<>(commands.size());
		for (int i = 0; i < commands.size(); i++) {
			replies.add(readOrError(connection));
			if (i == 0) {
				roundTrip.accept(System.nanoTime() - sent);
				if (replies.get(0) instanceof JedisDataException refused
						&& String.valueOf(refused.getMessage()).startsWith("NOAUTH")) {
					throw new AuthenticationFailedException("authentication failed: " + refused.getMessage(), refused);
				}
			}
		}
		for (int i = 0; i < LockScripts.CACHED.size(); i++) {
			// SCRIPT refused: EVALSHA falls back to EVAL on NOSCRIPT
			readOrError(connection);
		}
		if (!watched) {
			quarantine.observe((replies.get(0) instanceof byte[] info) ? InfoReply.parse(info) : Map.of());
			return;
		}
		NodeReport report = NodeReport.of(replies);
		MarkerWatch.MarkerWrite write = quarantine.inspect(report, System.nanoTime(), before);
		if (write != null) {
			connection.send(writeMarker(write));
			connection.flushNow();
			Object written = readOrError(connection);
			if (!(written instanceof JedisDataException)) {
				quarantine.markers().written(write, written, report.nodeMicros() / 1_000, System.nanoTime());
			}
		}
	}

	/** The compare-and-set of a marker: {@link LockScripts#WRITE_MARKER}. */
	static CommandArguments writeMarker(MarkerWatch.MarkerWrite write) {
		return new CommandArguments(Command.EVAL).add(LockScripts.WRITE_MARKER.source())
			.add(1)
			.add(NodeMarker.KEY)
			.add(write.expected())
			.add(write.marker().head())
			.add(write.marker().evidence());
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
