package dev.redlock.core;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.Protocol.Keyword;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * The first exchange on a new connection, in one round trip: what the server says about
 * itself, for the {@link NodeQuarantine quarantine} ({@code INFO server}: uptime and
 * {@code run_id}; {@code INFO replication}: a promotion; {@code TIME}: its clock; its
 * {@link NodeMarker marker}), and the lock scripts loaded, once per connection, not per
 * lock. With the scripts loaded, a release, an extension or a fenced acquisition is
 * answered by {@code EVALSHA} at once, so it can return as soon as a quorum confirms it.
 *
 * <p>
 * When the node's marker is gone, or a promotion is not recorded in it, a second round
 * trip writes a new one: with {@code countsFrom} a restart quarantine ahead, unless the
 * node shows it lost nothing (up for longer than the quarantine, no key evicted, never
 * flushed, swapped or reloaded since it started), so that every client waits out the same
 * quarantine. A server that refuses {@code INFO} (renamed command, ACL) or {@code SCRIPT}
 * is still used; one that wants a password we did not give ({@code NOAUTH}) is an
 * authentication failure.
 */
final class NodeGreeting {

	/** Commands whose use means the node may have dropped keys without restarting. */
	private static final List<String> DATA_LOSING_COMMANDS = List.of("cmdstat_flushall", "cmdstat_flushdb",
			"cmdstat_swapdb", "cmdstat_debug");

	private static final String NO_PROMOTION = "0000000000000000000000000000000000000000";

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
		long sent = System.nanoTime();
		boolean watched = quarantine.isOn();
		connection.send(new CommandArguments(Command.INFO).add("server"));
		if (watched) {
			// only the quarantine's detectors need these
			connection.send(new CommandArguments(Command.INFO).add("replication"));
			connection.send(new CommandArguments(Command.TIME));
			connection.send(new CommandArguments(Command.GET).add(NodeMarker.KEY));
		}
		for (LockScripts.Script script : LockScripts.CACHED) {
			connection.send(new CommandArguments(Command.SCRIPT).add("LOAD").add(script.source()));
		}
		connection.flushNow();
		Map<String, String> server = info(connection, true);
		long received = System.nanoTime();
		roundTrip.accept(received - sent);
		Map<String, String> replication = watched ? info(connection, false) : Map.of();
		long nodeMicros = watched ? time(connection) : -1;
		Object marker = null;
		boolean markerReadable = true;
		if (watched) {
			try {
				marker = connection.readReply();
			}
			catch (JedisDataException ex) {
				// an ACL user who may not read it: locks go on without that check
				markerReadable = false;
			}
		}
		for (int i = 0; i < LockScripts.CACHED.size(); i++) {
			try {
				connection.readReply();
			}
			catch (JedisDataException ex) {
				// SCRIPT refused: EVALSHA falls back to EVAL on NOSCRIPT
			}
		}
		quarantine.observe(server);
		if (nodeMicros < 0 || !quarantine.isOn()) {
			return;
		}
		quarantine.clockReading(nodeMicros, sent, received);
		if (!markerReadable) {
			quarantine.markers().unreadable();
			return;
		}
		long nodeMillis = nodeMicros / 1_000;
		NodeMarker current = NodeMarker.parse(marker);
		String promotedFrom = replication.get("master_replid2");
		boolean promoted = promotedFrom != null && !promotedFrom.isBlank() && !NO_PROMOTION.equals(promotedFrom);
		long quarantineMillis = TimeUnit.NANOSECONDS.toMillis(quarantine.quarantineNanos());
		if (promoted && (current == null || !promotedFrom.equals(current.promotedFrom()))) {
			NodeMarker failover = NodeMarker.create(nodeMillis + quarantineMillis, QuarantineReason.FAILOVER,
					promotedFrom);
			current = recordFailover(connection, promotedFrom, failover);
		}
		else if (current == null) {
			boolean lostNothing = lostNothing(connection, server, quarantineMillis);
			// a node up for less than the quarantine lost its marker with its restart
			QuarantineReason reason = upFor(server, quarantineMillis) ? QuarantineReason.DATA_LOSS
					: QuarantineReason.RESTART;
			NodeMarker fresh = lostNothing ? NodeMarker.create(0, null, NodeMarker.NOT_PROMOTED)
					: NodeMarker.create(nodeMillis + quarantineMillis, reason, NodeMarker.NOT_PROMOTED);
			current = writeIfAbsent(connection, fresh);
		}
		if (current != null) {
			quarantine.markers().observe(current, nodeMillis, System.nanoTime());
		}
	}

	private static Map<String, String> info(PipelinedConnection connection, boolean first) {
		try {
			Object reply = connection.readReply();
			return (reply instanceof byte[] bytes) ? InfoReply.parse(bytes) : Map.of();
		}
		catch (JedisDataException ex) {
			if (first && String.valueOf(ex.getMessage()).startsWith("NOAUTH")) {
				throw new AuthenticationFailedException("authentication failed: " + ex.getMessage(), ex);
			}
			return Map.of();
		}
	}

	/** The node's {@code TIME} in microseconds, or -1 if refused. */
	private static long time(PipelinedConnection connection) {
		try {
			Object reply = connection.readReply();
			if (reply instanceof List<?> parts && parts.size() == 2 && parts.get(0) instanceof byte[] seconds
					&& parts.get(1) instanceof byte[] micros) {
				return Long.parseLong(new String(seconds, StandardCharsets.US_ASCII)) * 1_000_000
						+ Long.parseLong(new String(micros, StandardCharsets.US_ASCII));
			}
			return -1;
		}
		catch (JedisDataException | NumberFormatException ex) {
			return -1;
		}
	}

	/**
	 * Whether the node shows it has lost no key since it started, long enough ago: then a
	 * missing marker was never written (or deleted by hand), and its locks are intact.
	 */
	private static boolean lostNothing(PipelinedConnection connection, Map<String, String> server,
			long quarantineMillis) {
		connection.send(new CommandArguments(Command.INFO).add("stats"));
		connection.send(new CommandArguments(Command.INFO).add("commandstats"));
		connection.flushNow();
		Map<String, String> stats = info(connection, false);
		Map<String, String> commands = info(connection, false);
		boolean nothingEvicted = "0".equals(stats.get("evicted_keys"));
		boolean neverDropped = !commands.isEmpty() && DATA_LOSING_COMMANDS.stream().noneMatch(commands::containsKey);
		return upFor(server, quarantineMillis) && nothingEvicted && neverDropped;
	}

	/** Whether the node says it has been up for longer than the given time. */
	private static boolean upFor(Map<String, String> server, long millis) {
		String uptime = server.get("uptime_in_seconds");
		try {
			return uptime != null && Long.parseLong(uptime.trim()) * 1_000 > millis;
		}
		catch (NumberFormatException ex) {
			return false;
		}
	}

	/** Writes the marker unless one appeared meanwhile; returns the one in place. */
	private static @Nullable NodeMarker writeIfAbsent(PipelinedConnection connection, NodeMarker marker) {
		connection.send(new CommandArguments(Command.SET).add(NodeMarker.KEY).add(marker.encode()).add(Keyword.NX));
		connection.send(new CommandArguments(Command.GET).add(NodeMarker.KEY));
		connection.flushNow();
		try {
			connection.readReply();
		}
		catch (JedisDataException ex) {
			// refused (ACL): the GET tells what is there
		}
		try {
			return NodeMarker.parse(connection.readReply());
		}
		catch (JedisDataException ex) {
			return null;
		}
	}

	/**
	 * Records the promotion in the marker unless it is recorded; returns the one in
	 * place.
	 */
	private static @Nullable NodeMarker recordFailover(PipelinedConnection connection, String promotedFrom,
			NodeMarker marker) {
		connection.send(new CommandArguments(Command.EVAL).add(LockScripts.RECORD_FAILOVER.source())
			.add(1)
			.add(NodeMarker.KEY)
			.add(promotedFrom)
			.add(marker.encode()));
		connection.flushNow();
		try {
			return NodeMarker.parse(connection.readReply());
		}
		catch (JedisDataException ex) {
			return null;
		}
	}

}
