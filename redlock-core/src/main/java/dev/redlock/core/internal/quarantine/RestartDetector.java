package dev.redlock.core.internal.quarantine;

import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.QuarantineReason;

/**
 * Finds restarts in what a node says about itself when a connection is opened
 * ({@code INFO server}): a node that restarted without persistence has forgotten the
 * locks it held, so one whose {@code uptime_in_seconds} is below the quarantine counts
 * again only once the quarantine has passed since its start. A {@code run_id} different
 * from the one seen before means another server answers at this address (a failover, a
 * reused address), which waits out the whole quarantine whatever its uptime.
 * {@code uptime_in_seconds} is rounded down, and the time is read after the reply: both
 * err on the side of a longer quarantine.
 */
final class RestartDetector {

	private final Quarantining quarantine;

	private final long quarantineNanos;

	private @Nullable String runId;

	/**
	 * The latest moment the current server can have started, once any connection told its
	 * uptime.
	 */
	private long startedByNanos;

	private boolean startKnown;

	private boolean uptimeUnknownLogged;

	RestartDetector(Quarantining quarantine, long quarantineNanos) {
		this.quarantine = quarantine;
		this.quarantineNanos = quarantineNanos;
	}

	/**
	 * Takes note of what the node said about itself in an {@code INFO} reply.
	 * @param info the fields of the reply (at least its {@code server} section)
	 */
	void observe(Map<String, String> info) {
		String uptimeText = info.get("uptime_in_seconds");
		Long uptime = null;
		try {
			uptime = (uptimeText != null) ? Long.parseLong(uptimeText.trim()) : null;
		}
		catch (NumberFormatException ex) {
			// treated as unknown below
		}
		observe(info.get("run_id"), uptime, System.nanoTime());
	}

	synchronized void observe(@Nullable String newRunId, @Nullable Long uptimeSeconds, long nowNanos) {
		String previousRunId = this.runId;
		if (newRunId != null) {
			this.runId = newRunId;
		}
		if (this.quarantineNanos == 0) {
			return;
		}
		if (uptimeSeconds == null) {
			if (!this.uptimeUnknownLogged) {
				this.uptimeUnknownLogged = true;
				this.quarantine.logger()
					.warn("Redis node {} does not tell its uptime (INFO refused?); the restart quarantine cannot "
							+ "protect locks against its restarts", this.quarantine.node());
			}
			return;
		}
		// uptime_in_seconds is the difference of two whole-second clock readings (now and
		// the start), so it can read 1 a millisecond after the start: count one second
		// less, never more than the node has been up
		long upNanos = TimeUnit.SECONDS.toNanos(Math.max(0, uptimeSeconds - 1));
		boolean restartedAgain = previousRunId != null && newRunId != null && !previousRunId.equals(newRunId);
		// the latest moment the server can have started; another server at this address
		// (a restart seen by its new run_id, a failover, a reused address) never held our
		// keys or holds stale ones: it counts from now
		long startedBy = restartedAgain ? nowNanos : nowNanos - upNanos;
		boolean sameServer = previousRunId != null && previousRunId.equals(newRunId);
		if (sameServer && this.startKnown) {
			// the same server seen again: its start cannot be later than the earliest
			// bound already known, so a later, coarser reading never quarantines a node
			// again
			startedBy = Math.min(startedBy, this.startedByNanos);
		}
		this.startKnown = true;
		this.startedByNanos = startedBy;
		this.quarantine.quarantine(QuarantineReason.RESTART, startedBy + this.quarantineNanos,
				"restarted " + uptimeSeconds + " s ago" + (restartedAgain ? " (new run_id)" : ""));
	}

	/**
	 * Returns the {@code run_id} the node last reported.
	 * @return the id, or {@code null} before any connection told it
	 */
	synchronized @Nullable String runId() {
		return this.runId;
	}

}
