package dev.redlock.core;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether one node may count towards a quorum, after what it said about itself when a
 * connection was opened.
 *
 * <p>
 * A node that restarted without persistence has forgotten the locks it held; if it
 * counted again at once, a second client could reach a quorum while the first still holds
 * the lock ("delayed restarts" in the Redlock spec). So a node whose
 * {@code uptime_in_seconds} is below the quarantine counts again only once the quarantine
 * has passed since its start: at {@code now + quarantine - uptime}. Uptime says when the
 * node started, also when it restarted while this client's connections were idle. A
 * {@code run_id} different from the one seen before means another server answers at this
 * address (a failover, a reused address), which waits out the whole quarantine whatever
 * its uptime; the {@code run_id} also finds the same server listed twice.
 * {@code uptime_in_seconds} is rounded down, and {@code now} is read after the reply:
 * both err on the side of a longer quarantine.
 *
 * <p>
 * A quarantined node still gets every command: a lock set there is released there. Only
 * its grants (and extensions) are not counted.
 */
final class NodeQuarantine {

	private static final Logger logger = LoggerFactory.getLogger(NodeQuarantine.class);

	private final RedisNodeUri node;

	private final long quarantineNanos;

	private volatile @Nullable String runId;

	/**
	 * {@link System#nanoTime()} from when the node counts again; meaningful only while
	 * {@link #quarantined}.
	 */
	private volatile long countsAgainAtNanos;

	/**
	 * The latest moment the current server can have started, once any connection told its
	 * uptime.
	 */
	private long startedByNanos;

	private boolean startKnown;

	private volatile boolean quarantined;

	private volatile boolean uptimeUnknownLogged;

	/** Told each time this node is quarantined. */
	private volatile Runnable onQuarantined = () -> {
	};

	NodeQuarantine(RedisNodeUri node, Duration quarantine) {
		this.node = node;
		this.quarantineNanos = quarantine.toNanos();
	}

	/**
	 * Sets what to tell each time this node is quarantined.
	 * @param onQuarantined called after the node's own warning is logged
	 */
	void onQuarantined(Runnable onQuarantined) {
		this.onQuarantined = onQuarantined;
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
				logger.warn("Redis node {} does not tell its uptime (INFO refused?); the restart quarantine cannot "
						+ "protect locks against its restarts", this.node);
			}
			return;
		}
		// uptime_in_seconds is the difference of two whole-second clock readings (now and
		// the start), so it can
		// read 1 a millisecond after the start: count one second less, never more than
		// the node has been up
		long upNanos = TimeUnit.SECONDS.toNanos(Math.max(0, uptimeSeconds - 1));
		boolean restartedAgain = previousRunId != null && newRunId != null && !previousRunId.equals(newRunId);
		// the latest moment the server can have started; another server at this address
		// (a restart seen by its new
		// run_id, a failover, a reused address) never held our keys or holds stale ones:
		// it counts from now
		long startedBy = restartedAgain ? nowNanos : nowNanos - upNanos;
		boolean sameServer = previousRunId != null && previousRunId.equals(newRunId);
		if (sameServer && this.startKnown) {
			// the same server seen again: its start cannot be later than the earliest
			// bound already known, so a
			// later, coarser reading never quarantines a node again
			startedBy = Math.min(startedBy, this.startedByNanos);
		}
		this.startKnown = true;
		this.startedByNanos = startedBy;
		long countsAgainAt = startedBy + this.quarantineNanos;
		if (countsAgainAt - nowNanos <= 0) {
			return;
		}
		boolean alreadyLogged = this.quarantined && !restartedAgain;
		this.countsAgainAtNanos = countsAgainAt;
		this.quarantined = true;
		if (!alreadyLogged) {
			Instant at = Instant.now().plusNanos(this.countsAgainAtNanos - nowNanos).truncatedTo(ChronoUnit.MILLIS);
			logger.warn(
					"Redis node {} restarted {} s ago{}; it counts towards a quorum again at {} (restart "
							+ "quarantine {}: it may have forgotten locks it held)",
					this.node, uptimeSeconds, restartedAgain ? " (new run_id)" : "", at,
					Duration.ofNanos(this.quarantineNanos));
		}
		this.onQuarantined.run();
	}

	/**
	 * Returns how long the node is still quarantined at a given time, without ending its
	 * quarantine (no lock taken).
	 * @param nowNanos a {@link System#nanoTime()} reading
	 * @return nanoseconds until it counts; zero when it counts
	 */
	long remainingNanosAt(long nowNanos) {
		return this.quarantined ? Math.max(0, this.countsAgainAtNanos - nowNanos) : 0;
	}

	boolean counts() {
		return remainingNanos() == 0;
	}

	/**
	 * Returns how long the node is still quarantined.
	 * @return zero when it counts
	 */
	Duration remaining() {
		return Duration.ofNanos(remainingNanos());
	}

	private long remainingNanos() {
		if (!this.quarantined) {
			return 0;
		}
		long left = this.countsAgainAtNanos - System.nanoTime();
		if (left > 0) {
			return left;
		}
		synchronized (this) {
			if (!this.quarantined) {
				return 0;
			}
			left = this.countsAgainAtNanos - System.nanoTime();
			if (left > 0) {
				// quarantined again meanwhile
				return left;
			}
			this.quarantined = false;
			logger.info("Redis node {} counts towards a quorum again: its restart quarantine is over", this.node);
			return 0;
		}
	}

	/**
	 * Returns the {@code run_id} the node last reported.
	 * @return the id, or {@code null} before any connection told it
	 */
	@Nullable String runId() {
		return this.runId;
	}

}
