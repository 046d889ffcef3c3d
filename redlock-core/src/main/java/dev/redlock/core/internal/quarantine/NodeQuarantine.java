package dev.redlock.core.internal.quarantine;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.QuarantineReason;
import dev.redlock.core.internal.transport.RedisNodeUri;

/**
 * Whether one node may count towards a quorum: a node that may have forgotten a lock it
 * granted must not count until every lock it may have forgotten has expired, that is for
 * the restart quarantine (which caps every TTL) from the moment the cause was seen. The
 * causes ({@link QuarantineReason}) are found by one detector each: a restart
 * ({@link RestartDetector}), a clock step (the {@link ClockConsensus consensus} of each
 * round's clocks, in {@link NodeJudge}), a failover or a loss of data
 * ({@link NodeMarker}, read by every acquisition and on every new connection). Each
 * quarantines the node here, with its reason and until when; a later cause extends the
 * quarantine, never shortens it. A new quarantine, or one for another reason, is logged
 * and told to the listener; a quarantine extended for the same reason (a clock that stays
 * off, judged again by every round) is not, to keep the log readable.
 *
 * <p>
 * A quarantined node still gets every command: a lock set there is released there. Only
 * its grants (and extensions) are not counted.
 */
public final class NodeQuarantine implements Quarantining {

	/** Told each time a node is quarantined, or its quarantine extended. */
	@FunctionalInterface
	public interface Listener {

		void quarantined(NodeQuarantine node, QuarantineReason reason, Duration duration);

	}

	private final RedisNodeUri node;

	private final String markerKey;

	private final long quarantineNanos;

	private final RestartDetector restarts;

	private final MarkerWatch markers;

	/** This client's monotonic clock: {@link System#nanoTime()} but in simulations. */
	private final LongSupplier ticker;

	/** Where this node's quarantines are told, and its detectors' findings. */
	private final Logger logger;

	private volatile boolean clockOffSeen;

	private volatile boolean clockUnreadableLogged;

	/**
	 * {@link System#nanoTime()} from when the node counts again; meaningful only while
	 * {@link #quarantined}.
	 */
	private volatile long countsAgainAtNanos;

	private volatile boolean quarantined;

	private volatile @Nullable QuarantineReason reason;

	private volatile Listener listener = (node, reason, duration) -> {
	};

	public NodeQuarantine(RedisNodeUri node, Duration quarantine) {
		this(node, quarantine, NodeMarker.KEY);
	}

	/**
	 * @param markerKey the key of the node's marker: {@link NodeMarker#KEY}, or on a node
	 * that serves some hash slots only, a key in one of them
	 */
	public NodeQuarantine(RedisNodeUri node, Duration quarantine, String markerKey) {
		this(node, quarantine, markerKey, System::nanoTime, LoggerFactory.getLogger(NodeQuarantine.class));
	}

	/**
	 * Creates one on a given monotonic clock, logging to a given logger (simulations run
	 * many clients on a clock of their own, and silence them).
	 * @param ticker this client's monotonic clock, in nanoseconds
	 * @param logger where quarantines and findings are told
	 */
	public NodeQuarantine(RedisNodeUri node, Duration quarantine, LongSupplier ticker, Logger logger) {
		this(node, quarantine, NodeMarker.KEY, ticker, logger);
	}

	private NodeQuarantine(RedisNodeUri node, Duration quarantine, String markerKey, LongSupplier ticker,
			Logger logger) {
		this.node = node;
		this.markerKey = markerKey;
		this.ticker = ticker;
		this.logger = logger;
		this.quarantineNanos = quarantine.toNanos();
		// a voter that waits for its replicas keeps every write that counted through a
		// promotion, so a promotion it can verify costs it no quarantine
		this.restarts = new RestartDetector(this, this.quarantineNanos, node.waitReplicas());
		this.markers = new MarkerWatch(this);
	}

	@Override
	public String markerKey() {
		return this.markerKey;
	}

	/** The detector of losses of data and failovers, through the node's marker. */
	public MarkerWatch markers() {
		return this.markers;
	}

	/**
	 * The node's clock was proven off the other nodes' in a round (ahead: it stepped
	 * forward, and dropped our keys early; behind: it stepped back, or was restored from
	 * a snapshot, and will drop the keys set now once corrected): it is quarantined from
	 * now, as any lock it dropped expires within the quarantine.
	 * @param ahead whether it stands ahead (else behind)
	 * @param byNanos by how much it is proven off the honest clocks
	 */
	void clockOff(boolean ahead, long byNanos) {
		this.clockOffSeen = true;
		String detail = "its clock stands " + TimeUnit.NANOSECONDS.toMillis(byNanos) + " ms "
				+ (ahead ? "ahead of" : "behind") + " the other nodes'";
		quarantine(QuarantineReason.CLOCK_STEP, this.ticker.getAsLong() + this.quarantineNanos, detail);
		// written in its marker, so that every client keeps it out, also one that never
		// reads it while its clock is off
		this.markers.record(QuarantineReason.CLOCK_STEP, detail);
	}

	/**
	 * Takes what a greeting or a probe read of the node into account: its restarts, an
	 * evicting configuration, and its marker, and decides what to write in the marker.
	 * @param report what the node said
	 * @param nowNanos this client's monotonic clock after it was read
	 * @param before what this client knew of the marker before it was read
	 * @param askedAtNanos this client's monotonic clock before the node was asked
	 * @return the write of the marker, or {@code null} for none
	 */
	MarkerWatch.@Nullable MarkerWrite inspect(NodeReport report, long nowNanos, MarkerWatch.Memory before,
			long askedAtNanos) {
		RestartDetector.Seen seen = this.restarts.observe(report.runId(), report.uptimeSeconds(), nowNanos,
				new RestartDetector.Asked(askedAtNanos, report.replicationId(), report.promotedFrom(),
						report.replicas()));
		if (!isOn() || seen == RestartDetector.Seen.FORMER) {
			// the former master seen late: its marker is the one the promotion replaced
			return null;
		}
		String policy = report.evictionPolicy();
		if (policy != null) {
			quarantine(QuarantineReason.EVICTION, nowNanos + this.quarantineNanos, "its maxmemory-policy " + policy
					+ " may evict lock keys (they carry a TTL) when it reaches its maxmemory; set noeviction");
		}
		return this.markers.inspect(report, nowNanos, TimeUnit.NANOSECONDS.toMillis(probePeriodNanos()), before,
				seen == RestartDetector.Seen.PROMOTION);
	}

	/**
	 * How often a probe reads the node ({@link NodeProbe}), and raises its marker's epoch
	 * when no other client did: a quarter of the quarantine, at most a second, so that a
	 * client reads every node's clock and state well within any quarantine, idle or not.
	 */
	long probePeriodNanos() {
		return Math.max(TimeUnit.MILLISECONDS.toNanos(10),
				Math.min(this.quarantineNanos / 4, TimeUnit.SECONDS.toNanos(1)));
	}

	/**
	 * The node refused to tell its time (an ACL without {@code TIME}): its clock steps go
	 * unseen, and its marker is judged by this client's clock.
	 */
	void clockUnreadable() {
		if (!this.clockUnreadableLogged) {
			this.clockUnreadableLogged = true;
			this.logger.warn("Redis node {} refuses TIME to this client: a step of its clock cannot be seen; "
					+ "allow the TIME command to the lock user", this.node);
		}
	}

	/**
	 * Whether the node's clock was ever found off the other nodes' by more than the clock
	 * tolerance: its time synchronisation needs fixing.
	 */
	public boolean clockOffSeen() {
		return this.clockOffSeen;
	}

	/**
	 * Sets what to tell each time this node is quarantined.
	 * @param listener called after the node's own warning is logged
	 */
	public void onQuarantined(Listener listener) {
		this.listener = listener;
	}

	@Override
	public Logger logger() {
		return this.logger;
	}

	/** The node, for logs. */
	@Override
	public RedisNodeUri node() {
		return this.node;
	}

	/** Whether quarantines are on at all (a restart quarantine above zero). */
	@Override
	public boolean isOn() {
		return this.quarantineNanos > 0;
	}

	/** The restart quarantine, in nanoseconds: how long a cause keeps a node out. */
	@Override
	public long quarantineNanos() {
		return this.quarantineNanos;
	}

	/**
	 * Takes note of what the node said about itself in an {@code INFO} reply: its uptime
	 * and {@code run_id} tell restarts.
	 * @param info the fields of the reply (at least its {@code server} section)
	 */
	public void observe(Map<String, String> info) {
		this.restarts.observe(info);
	}

	/**
	 * Takes note of what the node said about itself in an {@code INFO} reply with its
	 * {@code server} and {@code replication} sections: its uptime and {@code run_id} tell
	 * restarts, its replication ids a promotion.
	 * @param info the fields of the reply
	 * @param askedAtNanos this client's monotonic clock before the node was asked
	 */
	public void observe(Map<String, String> info, long askedAtNanos) {
		this.restarts.observe(info, askedAtNanos);
	}

	/** See {@link RestartDetector#observe(String, Long, long)}. */
	public void observe(@Nullable String runId, @Nullable Long uptimeSeconds, long nowNanos) {
		this.restarts.observe(runId, uptimeSeconds, nowNanos);
	}

	/**
	 * Keeps the node from counting until the given time, unless it already is until
	 * later.
	 * @param cause why it may have forgotten locks
	 * @param untilNanos {@link System#nanoTime()} from when it counts again
	 * @param detail what was seen, for the log
	 */
	@Override
	public void quarantine(QuarantineReason cause, long untilNanos, String detail) {
		if (this.quarantineNanos == 0) {
			return;
		}
		long now = this.ticker.getAsLong();
		Duration duration;
		synchronized (this) {
			boolean inForce = this.quarantined && this.countsAgainAtNanos - now > 0;
			if (untilNanos - now <= 0 || (inForce && untilNanos - this.countsAgainAtNanos <= 0)) {
				return;
			}
			boolean sameCause = inForce && this.reason == cause;
			this.countsAgainAtNanos = untilNanos;
			this.reason = cause;
			this.quarantined = true;
			if (sameCause) {
				return;
			}
			duration = Duration.ofNanos(untilNanos - now);
		}
		Instant at = Instant.now().plus(duration).truncatedTo(ChronoUnit.MILLIS);
		this.logger.warn(
				"Redis node {} does not count towards a quorum until {} ({}: {}; it may have forgotten locks it "
						+ "granted, which expire within the restart quarantine of {})",
				this.node, at, cause.words(), detail, Duration.ofNanos(this.quarantineNanos));
		try {
			this.listener.quarantined(this, cause, duration);
		}
		catch (RuntimeException ex) {
			this.logger.warn("Telling of the quarantine of Redis node {} failed", this.node, ex);
		}
	}

	public boolean counts() {
		return remainingNanos() == 0;
	}

	/**
	 * Returns how long the node is still quarantined.
	 * @return zero when it counts
	 */
	public Duration remaining() {
		return Duration.ofNanos(remainingNanos());
	}

	/**
	 * Returns why the node is quarantined now.
	 * @return the reason, or {@code null} when it counts
	 */
	public @Nullable QuarantineReason reason() {
		return (remainingNanos() > 0) ? this.reason : null;
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

	private long remainingNanos() {
		if (!this.quarantined) {
			return 0;
		}
		long left = this.countsAgainAtNanos - this.ticker.getAsLong();
		if (left > 0) {
			return left;
		}
		QuarantineReason over;
		synchronized (this) {
			if (!this.quarantined) {
				return 0;
			}
			left = this.countsAgainAtNanos - this.ticker.getAsLong();
			if (left > 0) {
				// quarantined again meanwhile
				return left;
			}
			this.quarantined = false;
			over = this.reason;
		}
		this.logger.info("Redis node {} counts towards a quorum again: its quarantine ({}) is over", this.node,
				(over != null) ? over.words() : "restart");
		return 0;
	}

	/**
	 * Returns the {@code run_id} the node last reported.
	 * @return the id, or {@code null} before any connection told it
	 */
	@Nullable String runId() {
		return this.restarts.runId();
	}

}
