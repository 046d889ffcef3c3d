package dev.redlock.core.internal.quarantine;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.QuarantineReason;
import dev.redlock.core.internal.round.Quorum;

/**
 * Says it out loud, once per {@code Redlock} and episode, when so many nodes are in
 * restart quarantine that no lock can be had at all: when the first lock can be had, and
 * what to do about nodes that were created a moment ago (which hold no locks, but look
 * like nodes that restarted). Each node's own quarantine is logged by
 * {@link NodeQuarantine}.
 */
public final class QuarantineNotice {

	private static final Logger logger = LoggerFactory.getLogger(QuarantineNotice.class);

	private final List<NodeQuarantine> quarantines;

	private final Quorum quorum;

	private final Duration quarantine;

	private final String redlock;

	/**
	 * {@link System#nanoTime()} until which no lock could be had when this last warned;
	 * the next warning waits until then.
	 */
	private long warnedUntilNanos;

	private boolean warned;

	public QuarantineNotice(List<NodeQuarantine> quarantines, Quorum quorum, Duration quarantine, String redlock) {
		this.quarantines = quarantines;
		this.quorum = quorum;
		this.quarantine = quarantine;
		this.redlock = redlock;
	}

	/**
	 * A node has just been quarantined: warns if a quorum no longer counts, unless this
	 * episode was already told.
	 * @return the warning logged, or {@code null}
	 */
	public synchronized @Nullable String nodeQuarantined() {
		long now = System.nanoTime();
		if (this.warned && this.warnedUntilNanos - now > 0) {
			return null;
		}
		long firstLockAt = firstLockAt(now);
		if (firstLockAt - now <= 0) {
			return null;
		}
		this.warned = true;
		this.warnedUntilNanos = firstLockAt;
		long waitMillis = TimeUnit.NANOSECONDS.toMillis(firstLockAt - now);
		Instant at = Instant.now().plusMillis(waitMillis).truncatedTo(ChronoUnit.SECONDS);
		String warning = "No lock can be acquired from " + this.redlock + " until about " + at + " (in "
				+ (waitMillis + 999) / 1000 + " s): " + quarantined(now) + " of " + this.quarantines.size()
				+ " nodes are in quarantine (" + reasons(now) + ") and a lock needs " + this.quorum.size()
				+ ". A node that may have forgotten locks it granted (it started less than the restart quarantine ("
				+ this.quarantine + ") ago, its clock stepped, a replica replaced it, it lost data) does not count "
				+ "towards a quorum until then. Nodes created just now hold no locks: to use them at once, turn the "
				+ "quarantine off (restartQuarantine 0, redlock.restart-quarantine=0s in Spring Boot) and run Redis "
				+ "with appendfsync always, or a node that restarts will count at once (see the restart quarantine "
				+ "in docs/guarantees.md)";
		logger.warn(warning);
		return warning;
	}

	/** When a quorum of nodes counts, as far as the quarantines tell. */
	private long firstLockAt(long now) {
		long[] countsAt = new long[this.quarantines.size()];
		// how long until each node counts, soonest first: the quorum-th one decides
		for (int i = 0; i < countsAt.length; i++) {
			countsAt[i] = this.quarantines.get(i).remainingNanosAt(now);
		}
		Arrays.sort(countsAt);
		return now + countsAt[this.quorum.size() - 1];
	}

	/** The reasons of the nodes in quarantine, e.g. {@code restart}. */
	private String reasons(long now) {
		Set<String> reasons = new TreeSet<>();
		for (NodeQuarantine node : this.quarantines) {
			QuarantineReason reason = node.reason();
			if (node.remainingNanosAt(now) > 0 && reason != null) {
				reasons.add(reason.words());
			}
		}
		return String.join(", ", reasons);
	}

	private int quarantined(long now) {
		int count = 0;
		for (NodeQuarantine node : this.quarantines) {
			if (node.remainingNanosAt(now) > 0) {
				count++;
			}
		}
		return count;
	}

}
