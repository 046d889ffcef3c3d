package dev.redlock.core.internal.quarantine;

import java.util.Map;
import java.util.Objects;
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
 *
 * <p>
 * On a voter whose writes count only once its replicas acknowledged them
 * ({@code waitReplicas}), another server that is a promoted replica of the one this
 * client knew holds every write that counted there, by that voter's contract, and is not
 * quarantined: its replication history continues the former server's (its
 * {@code master_replid2} is the former's {@code master_replid}), and it was already up
 * before the former server last answered this client, so it is not that server restarted
 * (a master restarted from its dump also continues its own history). A client that did
 * not know the former server cannot tell, and quarantines as for any other server; nor is
 * a promotion trusted after the former server told this client of more replicas than each
 * write waits for, since one of the others may be promoted without a write that counted.
 */
final class RestartDetector {

	private final Quarantining quarantine;

	private final long quarantineNanos;

	private @Nullable String runId;

	/**
	 * How many replicas each write counted on this voter waits for, 0 for none: a
	 * promoted replica of the known server is taken as it is only when writes wait.
	 */
	private final int awaitedReplicas;

	/**
	 * The most replicas the current server told this client of, as a master; -1 while
	 * none told.
	 */
	private int mostReplicas = -1;

	private boolean tooManyReplicasLogged;

	/** The current server's {@code master_replid}, once told. */
	private @Nullable String replicationId;

	/**
	 * The latest moment the current server is known to have answered: when this client
	 * asked it, before the reply.
	 */
	private long lastAskedNanos;

	private boolean asked;

	/**
	 * The current server's {@code master_replid2} when it replaced a master, once told.
	 */
	private @Nullable String promotedFrom;

	/** The server whose promotion was verified, {@code null} while none. */
	private @Nullable String promotedRunId;

	/** The replication id it replaced then. */
	private @Nullable String promotedRunFrom;

	/** The server that promotion replaced, {@code null} while none. */
	private @Nullable String formerRunId;

	/** What that server said it replaced, {@code null} for none. */
	private @Nullable String formerPromotedFrom;

	/**
	 * The latest moment the current server can have started, once any connection told its
	 * uptime.
	 */
	private long startedByNanos;

	private boolean startKnown;

	private boolean uptimeUnknownLogged;

	RestartDetector(Quarantining quarantine, long quarantineNanos) {
		this(quarantine, quarantineNanos, 0);
	}

	/**
	 * @param awaitedReplicas how many replicas each write counted there waits for, 0 for
	 * none: a verified promotion of a replica of the known server is taken without a
	 * quarantine only where writes wait
	 */
	RestartDetector(Quarantining quarantine, long quarantineNanos, int awaitedReplicas) {
		this.quarantine = quarantine;
		this.quarantineNanos = quarantineNanos;
		this.awaitedReplicas = awaitedReplicas;
	}

	/**
	 * Takes note of what the node said about itself in an {@code INFO} reply.
	 * @param info the fields of the reply (at least its {@code server} section)
	 */
	void observe(Map<String, String> info) {
		observe(info.get("run_id"), uptime(info), System.nanoTime(), null);
	}

	/**
	 * Takes note of what the node said about itself in an {@code INFO} reply (with its
	 * {@code replication} section, to tell a promotion).
	 * @param info the fields of the reply
	 * @param askedAtNanos when it was asked, before the reply
	 */
	void observe(Map<String, String> info, long askedAtNanos) {
		observe(info.get("run_id"), uptime(info), System.nanoTime(), new Asked(askedAtNanos,
				NodeReport.replicationId(info), NodeReport.promotedFrom(info), NodeReport.replicaCount(info)));
	}

	/**
	 * The {@code uptime_in_seconds} of an {@code INFO} reply, {@code null} when unknown.
	 */
	private static @Nullable Long uptime(Map<String, String> info) {
		String uptimeText = info.get("uptime_in_seconds");
		try {
			return (uptimeText != null) ? Long.parseLong(uptimeText.trim()) : null;
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	synchronized void observe(@Nullable String newRunId, @Nullable Long uptimeSeconds, long nowNanos) {
		observe(newRunId, uptimeSeconds, nowNanos, null);
	}

	/**
	 * Takes note of who the node is and since when.
	 * @param asked when it was asked and what it said of its replication; {@code null}
	 * when not told
	 * @return what was seen: any server, a verified promotion taken without a quarantine,
	 * or the server that promotion replaced, still answering a connection opened before
	 * it (told late: nothing is learnt from it)
	 */
	synchronized Seen observe(@Nullable String newRunId, @Nullable Long uptimeSeconds, long nowNanos,
			@Nullable Asked asked) {
		if (asked != null && newRunId != null && newRunId.equals(this.formerRunId)
				&& Objects.equals(asked.promotedFrom(), this.formerPromotedFrom)) {
			return Seen.FORMER;
		}
		String previousRunId = this.runId;
		boolean sameServer = previousRunId != null && previousRunId.equals(newRunId);
		boolean promoted = !sameServer && newRunId != null && asked != null
				&& verifiedPromotion(uptimeSeconds, nowNanos, asked);
		if (promoted) {
			this.formerRunId = previousRunId;
			this.formerPromotedFrom = this.promotedFrom;
		}
		if (newRunId != null) {
			this.runId = newRunId;
		}
		if (asked != null && newRunId != null && asked.replicationId() != null) {
			// only a master's answer: a replica's tells its master's history, not its own
			if (!sameServer || !this.asked || asked.atNanos() - this.lastAskedNanos > 0) {
				this.lastAskedNanos = asked.atNanos();
			}
			this.asked = true;
			this.promotedFrom = asked.promotedFrom();
			this.replicationId = asked.replicationId();
			this.mostReplicas = sameServer ? Math.max(this.mostReplicas, asked.replicas()) : asked.replicas();
			warnOfReplicasNotWaitedFor(asked.replicas());
		}
		if (promoted) {
			this.promotedRunId = newRunId;
			this.promotedRunFrom = asked.promotedFrom();
			// it holds what counted unless it lost it itself, as a replica that restarted
			// from an older dump: what it lost then expires a quarantine after its start
			long startedBy = nowNanos - TimeUnit.SECONDS.toNanos(Math.max(0, uptimeSeconds - 1));
			this.startKnown = true;
			this.startedByNanos = startedBy;
			this.quarantine.logger()
				.info("Redis node {}: a replica of the server this client knew was promoted in its place; writes "
						+ "there count only once replicas acknowledged them, so it counts on", this.quarantine.node());
			this.quarantine.quarantine(QuarantineReason.RESTART, startedBy + this.quarantineNanos,
					"promoted in place of the master this client knew, up for only " + uptimeSeconds
							+ " s: it may have lost writes it acknowledged before its start");
			return Seen.PROMOTION;
		}
		if (newRunId != null && newRunId.equals(this.promotedRunId) && asked != null
				&& Objects.equals(asked.promotedFrom(), this.promotedRunFrom)) {
			// the promotion seen before, told again by another connection
			return Seen.PROMOTION;
		}
		if (this.quarantineNanos == 0) {
			return Seen.SERVER;
		}
		if (uptimeSeconds == null) {
			if (!this.uptimeUnknownLogged) {
				this.uptimeUnknownLogged = true;
				this.quarantine.logger()
					.warn("Redis node {} does not tell its uptime (INFO refused?); the restart quarantine cannot "
							+ "protect locks against its restarts", this.quarantine.node());
			}
			return Seen.SERVER;
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
		return Seen.SERVER;
	}

	/**
	 * Warns, once, of a master with more replicas than each write waits for: a promotion
	 * there is not taken as it is.
	 */
	private void warnOfReplicasNotWaitedFor(int replicas) {
		if (this.awaitedReplicas > 0 && replicas > this.awaitedReplicas && !this.tooManyReplicasLogged) {
			this.tooManyReplicasLogged = true;
			this.quarantine.logger()
				.warn("Redis node {}: its master has {} replicas, and each write waits for {} of them; a promotion "
						+ "there is quarantined like any failover, since a replica that did not acknowledge a lock "
						+ "may be promoted: set waitReplicas to the replica count", this.quarantine.node(), replicas,
						this.awaitedReplicas);
		}
	}

	/**
	 * Whether another server is a promoted replica of the one known: it continues the
	 * known server's replication history, and had started before this client last asked
	 * the known server (its uptime counted a second short, as it may read one too many);
	 * and the known server never told of more replicas than each write waits for.
	 */
	private boolean verifiedPromotion(@Nullable Long uptimeSeconds, long nowNanos, Asked asked) {
		if (this.awaitedReplicas == 0 || this.quarantineNanos == 0 || this.runId == null || !this.asked
				|| this.replicationId == null || uptimeSeconds == null || this.mostReplicas > this.awaitedReplicas) {
			return false;
		}
		long startedBy = nowNanos - TimeUnit.SECONDS.toNanos(Math.max(0, uptimeSeconds - 1));
		return this.replicationId.equals(asked.promotedFrom()) && startedBy - this.lastAskedNanos < 0;
	}

	/**
	 * Returns the {@code run_id} the node last reported.
	 * @return the id, or {@code null} before any connection told it
	 */
	synchronized @Nullable String runId() {
		return this.runId;
	}

	/** What an observation saw. */
	enum Seen {

		/** A server, judged by its {@code run_id} and uptime. */
		SERVER,

		/** A promoted replica of the server known, verified and trusted. */
		PROMOTION,

		/**
		 * The server a trusted promotion replaced, as it was, answering a connection
		 * opened before the promotion was followed.
		 */
		FORMER

	}

	/**
	 * When a node was asked, and what it said of its replication.
	 *
	 * @param atNanos {@link System#nanoTime()} before the question was sent
	 * @param replicationId its {@code master_replid} when it answered as a master,
	 * {@code null} when not told or a replica
	 * @param promotedFrom its {@code master_replid2} when it replaced a master, else
	 * {@code null}
	 * @param replicas its connected replicas when it answered as a master, else -1
	 */
	record Asked(long atNanos, @Nullable String replicationId, @Nullable String promotedFrom, int replicas) {
	}

}
