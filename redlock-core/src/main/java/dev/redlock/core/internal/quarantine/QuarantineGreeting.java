package dev.redlock.core.internal.quarantine;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.protocol.InfoReply;
import dev.redlock.core.internal.protocol.LockScripts;
import dev.redlock.core.internal.transport.GreetingListener;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * The quarantine's part of a new connection's greeting: what the server says about itself
 * (a {@link NodeReport}: {@code INFO} server, replication, stats, commandstats and
 * memory, {@code TIME}, its {@link NodeMarker marker}; only {@code INFO server} with the
 * quarantine off) is inspected, and when the quarantine finds something to write in the
 * marker (it is gone, the node lost data, went back, was replaced, or its epoch is due to
 * rise) the greeting writes it, a compare-and-set.
 */
public final class QuarantineGreeting implements GreetingListener {

	private static final List<CommandArguments> UNWATCHED = List.of(new CommandArguments(Command.INFO).add("server"));

	private final NodeQuarantine quarantine;

	/** What a greeting asks with the quarantine on. */
	private final List<CommandArguments> questions;

	public QuarantineGreeting(NodeQuarantine quarantine) {
		this.quarantine = quarantine;
		this.questions = NodeReport.commands(quarantine.markerKey());
	}

	@Override
	public Conversation started() {
		// what this client knew of the marker before the greeting: a marker that moved
		// since is judged against it
		MarkerWatch.Memory before = this.quarantine.markers().memory();
		return this.quarantine.isOn() ? new Watched(before) : new Unwatched();
	}

	/** The compare-and-set of a marker: {@link LockScripts#WRITE_MARKER}. */
	static CommandArguments writeMarker(MarkerWatch.MarkerWrite write, String markerKey) {
		return new CommandArguments(Command.EVAL).add(LockScripts.WRITE_MARKER.source())
			.add(1)
			.add(markerKey)
			.add(write.expected())
			.add(write.marker().head())
			.add(write.marker().evidence());
	}

	/** With the quarantine off: only restarts are watched, for the node's status. */
	private final class Unwatched implements Conversation {

		@Override
		public List<CommandArguments> questions() {
			return UNWATCHED;
		}

		@Override
		public @Nullable CommandArguments answered(List<@Nullable Object> replies) {
			QuarantineGreeting.this.quarantine
				.observe((replies.get(0) instanceof byte[] info) ? InfoReply.parse(info) : Map.of());
			return null;
		}

		@Override
		public void followUpAnswered(@Nullable Object reply) {
		}

	}

	/** With the quarantine on: the whole report, and the marker written when due. */
	private final class Watched implements Conversation {

		private final MarkerWatch.Memory before;

		/** When the greeting started, before its questions were sent. */
		private final long startedAtNanos = System.nanoTime();

		private MarkerWatch.@Nullable MarkerWrite write;

		private long nodeMillis;

		Watched(MarkerWatch.Memory before) {
			this.before = before;
		}

		@Override
		public List<CommandArguments> questions() {
			return QuarantineGreeting.this.questions;
		}

		@Override
		public @Nullable CommandArguments answered(List<@Nullable Object> replies) {
			NodeReport report = NodeReport.of(replies);
			this.nodeMillis = report.nodeMicros() / 1_000;
			this.write = QuarantineGreeting.this.quarantine.inspect(report, System.nanoTime(), this.before,
					this.startedAtNanos);
			return (this.write != null) ? writeMarker(this.write, QuarantineGreeting.this.quarantine.markerKey())
					: null;
		}

		@Override
		public void followUpAnswered(@Nullable Object reply) {
			MarkerWatch.MarkerWrite write = this.write;
			if (write != null && !(reply instanceof JedisDataException)) {
				QuarantineGreeting.this.quarantine.markers().written(write, reply, this.nodeMillis, System.nanoTime());
			}
		}

	}

}
