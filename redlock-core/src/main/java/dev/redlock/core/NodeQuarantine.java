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
 * Whether one node may count towards a quorum: a node that may have forgotten a lock it
 * granted must not count until every lock it may have forgotten has expired, that is for
 * the restart quarantine (which caps every TTL) from the moment the cause was seen. The
 * causes ({@link QuarantineReason}) are found by one detector each: a restart
 * ({@link RestartDetector}), a clock step ({@link ClockWatch}), a failover or a loss of
 * data ({@link NodeMarker}, read by every acquisition and on every new connection). Each
 * quarantines the node here, with its reason and until when; a later cause extends the
 * quarantine, never shortens it.
 *
 * <p>
 * A quarantined node still gets every command: a lock set there is released there. Only
 * its grants (and extensions) are not counted.
 */
final class NodeQuarantine implements Quarantining {

	private static final Logger logger = LoggerFactory.getLogger(NodeQuarantine.class);

	/** Told each time a node is quarantined, or its quarantine extended. */
	@FunctionalInterface
	interface Listener {

		void quarantined(NodeQuarantine node, QuarantineReason reason, Duration duration);

	}

	private final RedisNodeUri node;

	private final long quarantineNanos;

	private final RestartDetector restarts;

	private final ClockWatch clock;

	private final MarkerWatch markers;

	private final double clockDriftFactor;

	private volatile boolean clockRateWarned;

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

	NodeQuarantine(RedisNodeUri node, Duration quarantine) {
		this(node, quarantine, RedlockSettings.defaults().clockDriftFactor());
	}

	NodeQuarantine(RedisNodeUri node, Duration quarantine, double clockDriftFactor) {
		this.node = node;
		this.quarantineNanos = quarantine.toNanos();
		this.clockDriftFactor = clockDriftFactor;
		this.restarts = new RestartDetector(this, this.quarantineNanos);
		this.clock = new ClockWatch(this.quarantineNanos);
		this.markers = new MarkerWatch(this);
	}

	/** The detector of losses of data and failovers, through the node's marker. */
	MarkerWatch markers() {
		return this.markers;
	}

	/**
	 * Whether this client met the node less than a quarantine ago, so that its clock is
	 * judged against the other nodes' rather than its own history.
	 */
	boolean isNewClock(long nowNanos) {
		return this.clock.isNew(nowNanos);
	}

	/**
	 * Takes a reading of the node's clock from a new connection into account; a proven
	 * step beyond what any TTL could absorb quarantines the node.
	 */
	void clockReading(long nodeMicros, long before, long after) {
		if (!isOn()) {
			return;
		}
		long step = this.clock.observe(nodeMicros, before, after);
		if (!this.clock.isNew(after) && step > stepThresholdNanos(this.quarantineNanos)) {
			clockStepped(step, nodeMicros, before, after);
		}
	}

	/**
	 * Judges the reading of the node's clock that came with a grant: a forward step since
	 * the baseline beyond half the drift allowance of the lock's TTL quarantines the
	 * node, and the grant does not count.
	 * @param ttlNanos the TTL of the lock the grant is for
	 * @return whether the grant may count
	 */
	boolean admitsClock(long nodeMicros, long before, long after, long ttlNanos) {
		if (!isOn()) {
			return true;
		}
		long step = this.clock.observe(nodeMicros, before, after);
		if (!this.clock.isNew(after) && step > stepThresholdNanos(ttlNanos)) {
			clockStepped(step, nodeMicros, before, after);
			return false;
		}
		double fast = this.clock.excessRate(nodeMicros, after);
		if (fast > this.clockDriftFactor && !this.clockRateWarned) {
			this.clockRateWarned = true;
			logger.warn(
					"The clock of Redis node {} runs {}% faster than this client's, more than the clock drift "
							+ "factor ({}) allows: its keys expire early; fix its time synchronisation",
					this.node, String.format("%.2f", fast * 100), this.clockDriftFactor);
		}
		return true;
	}

	/**
	 * The node refused to tell its time (an ACL without {@code TIME}): its clock steps go
	 * unseen, and its marker is judged by this client's clock.
	 */
	void clockUnreadable() {
		if (!this.clockUnreadableLogged) {
			this.clockUnreadableLogged = true;
			logger.warn("Redis node {} refuses TIME to this client: a step of its clock cannot be seen; "
					+ "allow the TIME command to the lock user", this.node);
		}
	}

	/**
	 * A node first met less than a quarantine ago whose clock stands ahead of the other
	 * nodes': it may have stepped before this client met it.
	 * @param aheadNanos by how much it is proven ahead of the others' median
	 */
	void clockAhead(long aheadNanos, long nodeMicros, long before, long after) {
		this.quarantine(QuarantineReason.CLOCK_STEP, after + this.quarantineNanos,
				"its clock stands " + TimeUnit.NANOSECONDS.toMillis(aheadNanos) + " ms ahead of the other nodes'");
		this.clock.rebase(nodeMicros, before, after);
	}

	private void clockStepped(long step, long nodeMicros, long before, long after) {
		quarantine(QuarantineReason.CLOCK_STEP, after + this.quarantineNanos,
				"its clock stepped forward by " + TimeUnit.NANOSECONDS.toMillis(step) + " ms");
		this.clock.rebase(nodeMicros, before, after);
	}

	/**
	 * The largest step of a node's clock a lock of this TTL absorbs unseen: half its
	 * drift allowance, so that a step just under it on a node met before, or twice that
	 * on a node compared with the others, stays within the margin validity keeps.
	 */
	long stepThresholdNanos(long ttlNanos) {
		return ((long) (ttlNanos * this.clockDriftFactor) + RedlockSettings.DRIFT_BASE.toNanos()) / 2;
	}

	/**
	 * Whether the clock of the node was found to run faster than the drift factor allows.
	 */
	boolean clockRunsFast() {
		return this.clockRateWarned;
	}

	/**
	 * Sets what to tell each time this node is quarantined.
	 * @param listener called after the node's own warning is logged
	 */
	void onQuarantined(Listener listener) {
		this.listener = listener;
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
	void observe(Map<String, String> info) {
		this.restarts.observe(info);
	}

	/** See {@link RestartDetector#observe(String, Long, long)}. */
	void observe(@Nullable String runId, @Nullable Long uptimeSeconds, long nowNanos) {
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
		long now = System.nanoTime();
		Duration duration;
		synchronized (this) {
			if (untilNanos - now <= 0 || (this.quarantined && untilNanos - this.countsAgainAtNanos <= 0)) {
				return;
			}
			this.countsAgainAtNanos = untilNanos;
			this.reason = cause;
			this.quarantined = true;
			duration = Duration.ofNanos(untilNanos - now);
		}
		Instant at = Instant.now().plus(duration).truncatedTo(ChronoUnit.MILLIS);
		logger.warn(
				"Redis node {} does not count towards a quorum until {} ({}: {}; it may have forgotten locks it "
						+ "granted, which expire within the restart quarantine of {})",
				this.node, at, cause.words(), detail, Duration.ofNanos(this.quarantineNanos));
		try {
			this.listener.quarantined(this, cause, duration);
		}
		catch (RuntimeException ex) {
			logger.warn("Telling of the quarantine of Redis node {} failed", this.node, ex);
		}
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

	/**
	 * Returns why the node is quarantined now.
	 * @return the reason, or {@code null} when it counts
	 */
	@Nullable QuarantineReason reason() {
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
		long left = this.countsAgainAtNanos - System.nanoTime();
		if (left > 0) {
			return left;
		}
		QuarantineReason over;
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
			over = this.reason;
		}
		logger.info("Redis node {} counts towards a quorum again: its quarantine ({}) is over", this.node,
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
