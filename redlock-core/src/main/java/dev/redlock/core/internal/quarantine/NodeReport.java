package dev.redlock.core.internal.quarantine;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.protocol.AcquireReply;
import dev.redlock.core.internal.protocol.InfoReply;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;

/**
 * What a node says about itself when a connection greets it or a probe checks it, for its
 * {@link NodeQuarantine quarantine}: who it is and since when ({@code run_id}, uptime),
 * whether a replica was promoted in its place, what it dropped since its start (calls of
 * the commands that drop keys, evicted keys), whether it may evict keys, its clock and
 * its {@link NodeMarker marker}. Read with {@link #COMMANDS} in one round trip.
 *
 * @param runId its {@code run_id}, or {@code null} when {@code INFO} was refused
 * @param uptimeSeconds its {@code uptime_in_seconds}, or {@code null}
 * @param promotedFrom the replication id of the master it replaced
 * ({@code master_replid2}), or {@code null} when it replaced none
 * @param flushes calls of {@code FLUSHALL}, {@code FLUSHDB} and {@code SWAPDB} since its
 * start, or -1 when unknown
 * @param debugs calls of {@code DEBUG} (which can reload a dump) since its start, or -1
 * @param evictedKeys keys evicted since its start, or -1
 * @param evictionPolicy its {@code maxmemory_policy} when it has a {@code maxmemory}, so
 * may evict keys ({@code noeviction} or {@code null} when it may not)
 * @param nodeMicros its {@code TIME}, or -1 when refused
 * @param marker its marker as read: the value, {@code null} when gone,
 * {@link AcquireReply#UNREADABLE} when this client may not read it
 * @param replicationId its replication id ({@code master_replid}) when it answers as a
 * master, else {@code null}
 * @param replicas its connected replicas ({@code connected_slaves}) when it answers as a
 * master, else -1
 */
record NodeReport(@Nullable String runId, @Nullable Long uptimeSeconds, @Nullable String promotedFrom, long flushes,
		long debugs, long evictedKeys, @Nullable String evictionPolicy, long nodeMicros, @Nullable Object marker,
		@Nullable String replicationId, int replicas) {

	/** A report that does not tell the node's replication id nor its replicas. */
	NodeReport(@Nullable String runId, @Nullable Long uptimeSeconds, @Nullable String promotedFrom, long flushes,
			long debugs, long evictedKeys, @Nullable String evictionPolicy, long nodeMicros, @Nullable Object marker) {
		this(runId, uptimeSeconds, promotedFrom, flushes, debugs, evictedKeys, evictionPolicy, nodeMicros, marker, null,
				-1);
	}

	/**
	 * What a greeting or a probe sends, in this order: {@code INFO} server, replication,
	 * stats, commandstats and memory, {@code TIME}, the marker.
	 */
	static final List<CommandArguments> COMMANDS = commands(NodeMarker.KEY);

	/**
	 * What a greeting or a probe sends to a node whose marker has the given key.
	 * @param markerKey the key of the node's marker
	 */
	static List<CommandArguments> commands(String markerKey) {
		return List.of(info("server"), info("replication"), info("stats"), info("commandstats"), info("memory"),
				new CommandArguments(Command.TIME), new CommandArguments(Command.GET).add(markerKey));
	}

	private static final String NO_PROMOTION = "0000000000000000000000000000000000000000";

	private static CommandArguments info(String section) {
		return new CommandArguments(Command.INFO).add(section);
	}

	/**
	 * Reads the replies to {@link #COMMANDS}.
	 * @param replies each reply in order, an exception standing for an error reply
	 */
	static NodeReport of(List<?> replies) {
		Map<String, String> server = info(replies.get(0));
		Map<String, String> replication = info(replies.get(1));
		Map<String, String> stats = info(replies.get(2));
		Map<String, String> commands = info(replies.get(3));
		Map<String, String> memory = info(replies.get(4));
		Object marker = replies.get(6);
		return new NodeReport(server.get("run_id"), number(server.get("uptime_in_seconds")), promotedFrom(replication),
				commands.isEmpty() ? -1 : calls(commands, "flushall", "flushdb", "swapdb"),
				commands.isEmpty() ? -1 : calls(commands, "debug"), orMinusOne(number(stats.get("evicted_keys"))),
				evictionPolicy(memory), AcquireReply.timeMicros(replies.get(5)), AcquireReply.markerRead(marker),
				replicationId(replication), replicaCount(replication));
	}

	/**
	 * A master's own replication id, from its {@code INFO replication}.
	 * @param replication the fields of the section
	 * @return its {@code master_replid}, or {@code null} when it is a replica (which
	 * reports its master's) or does not tell
	 */
	static @Nullable String replicationId(Map<String, String> replication) {
		return "master".equals(replication.get("role")) ? replication.get("master_replid") : null;
	}

	/**
	 * A master's connected replicas, from its {@code INFO replication}.
	 * @param replication the fields of the section
	 * @return its {@code connected_slaves}, or -1 when it is a replica or does not tell
	 */
	static int replicaCount(Map<String, String> replication) {
		String count = "master".equals(replication.get("role")) ? replication.get("connected_slaves") : null;
		try {
			return (count != null) ? Integer.parseInt(count.trim()) : -1;
		}
		catch (NumberFormatException ex) {
			return -1;
		}
	}

	/**
	 * The replication id of the master a node replaced, from its
	 * {@code INFO replication}.
	 * @param replication the fields of the section
	 * @return its {@code master_replid2}, or {@code null} when it replaced none
	 */
	static @Nullable String promotedFrom(Map<String, String> replication) {
		String promotedFrom = replication.get("master_replid2");
		boolean promoted = promotedFrom != null && !promotedFrom.isBlank() && !NO_PROMOTION.equals(promotedFrom);
		return promoted ? promotedFrom : null;
	}

	private static Map<String, String> info(@Nullable Object reply) {
		return (reply instanceof byte[] bytes) ? InfoReply.parse(bytes) : Map.of();
	}

	/** The calls of the given commands in an {@code INFO commandstats} reply. */
	private static long calls(Map<String, String> commands, String... names) {
		long calls = 0;
		for (String name : names) {
			String stats = commands.get("cmdstat_" + name);
			if (stats != null) {
				int start = stats.indexOf("calls=");
				int end = stats.indexOf(',', start);
				Long count = (start < 0) ? null : number(stats.substring(start + 6, (end < 0) ? stats.length() : end));
				calls += (count != null) ? count : 1;
			}
		}
		return calls;
	}

	private static @Nullable String evictionPolicy(Map<String, String> memory) {
		Long maxmemory = number(memory.get("maxmemory"));
		String policy = memory.get("maxmemory_policy");
		return (maxmemory != null && maxmemory > 0 && policy != null && !policy.equals("noeviction")) ? policy : null;
	}

	private static @Nullable Long number(@Nullable String text) {
		try {
			return (text != null) ? Long.valueOf(text.trim()) : null;
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	private static long orMinusOne(@Nullable Long value) {
		return (value != null) ? value : -1;
	}

	/**
	 * What the node shows of its losses, as a marker records it:
	 * {@code <run_id>:<flushes>:<debugs>:<evicted>}, or {@code -} when it does not tell.
	 */
	String evidence() {
		if (this.runId == null || this.flushes < 0 || this.debugs < 0 || this.evictedKeys < 0) {
			return NodeMarker.NO_EVIDENCE;
		}
		return this.runId + ":" + this.flushes + ":" + this.debugs + ":" + this.evictedKeys;
	}

	/** Whether the node shows it dropped no key since it started. */
	boolean lostNothingSinceStart() {
		return this.flushes == 0 && this.debugs == 0 && this.evictedKeys == 0;
	}

	/** Whether the node has been up for longer than the given time. */
	boolean upFor(long millis) {
		return this.uptimeSeconds != null && this.uptimeSeconds * 1_000 > millis;
	}

}
