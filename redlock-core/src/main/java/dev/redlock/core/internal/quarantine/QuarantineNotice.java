package dev.redlock.core.internal.quarantine;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.QuarantineReason;
import dev.redlock.core.internal.round.Quorum;
import dev.redlock.core.internal.round.VoterLayout;

/**
 * Says it out loud, once per {@code Redlock} and episode, when so many nodes are in
 * restart quarantine that no lock can be had at all (with voters of several nodes, no
 * lock whose key is in some slots): when the first lock can be had, and what to do about
 * nodes that were created a moment ago (which hold no locks, but look like nodes that
 * restarted). Each node's own quarantine is logged by {@link NodeQuarantine}.
 */
public final class QuarantineNotice {

	private static final Logger logger = LoggerFactory.getLogger(QuarantineNotice.class);

	private final List<NodeQuarantine> quarantines;

	/** Which nodes make up each voter, and which slots each serves now. */
	private final Supplier<VoterLayout> layouts;

	/**
	 * The nodes a lock's round goes to, by the slot of its key: one range unless sharded.
	 */
	private final Quorum quorum;

	private final Duration quarantine;

	private final String redlock;

	/**
	 * {@link System#nanoTime()} until which no lock could be had when this last warned;
	 * the next warning waits until then.
	 */
	private long warnedUntilNanos;

	private boolean warned;

	/**
	 * @param quarantines every node's quarantine, in node order
	 * @param layouts which nodes make up each voter, and which slots each serves now
	 * @param quorum the voters' quorum
	 * @param quarantine the restart quarantine
	 * @param redlock the {@code Redlock} as a warning names it
	 */
	public QuarantineNotice(List<NodeQuarantine> quarantines, Supplier<VoterLayout> layouts, Quorum quorum,
			Duration quarantine, String redlock) {
		this.quarantines = quarantines;
		this.layouts = layouts;
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
		List<VoterLayout.KeyRange> blocked = new ArrayList<>();
		long firstLockAt = now;
		for (VoterLayout.KeyRange range : layout().keyRanges()) {
			long at = firstLockAt(range, now);
			if (at - now > 0) {
				blocked.add(range);
				firstLockAt = (at - firstLockAt > 0) ? at : firstLockAt;
			}
		}
		if (blocked.isEmpty()) {
			return null;
		}
		this.warned = true;
		this.warnedUntilNanos = firstLockAt;
		long waitMillis = TimeUnit.NANOSECONDS.toMillis(firstLockAt - now);
		Instant at = Instant.now().plusMillis(waitMillis).truncatedTo(ChronoUnit.SECONDS);
		String which = layout().sharded() ? "No lock whose key is in slots " + slots(blocked) : "No lock";
		String needs = layout().sharded()
				? " voters, each counted by its node that serves the key's slot (" + layout() + ")" : "";
		String warning = which + " can be acquired from " + this.redlock + " until about " + at + " (in "
				+ (waitMillis + 999) / 1000 + " s): " + quarantined(now) + " of " + this.quarantines.size()
				+ " nodes are in quarantine (" + reasons(now) + ") and a lock needs " + this.quorum.size() + needs
				+ ". A node that may have forgotten locks it granted (it started less than the restart quarantine ("
				+ this.quarantine + ") ago, its clock stepped, a replica replaced it, it lost data) does not count "
				+ "towards a quorum until then. Nodes created just now hold no locks: to use them at once, turn the "
				+ "quarantine off (restartQuarantine 0, redlock.restart-quarantine=0s in Spring Boot) and run Redis "
				+ "with appendfsync always, or a node that restarts will count at once (see the restart quarantine "
				+ "in docs/guarantees.md)";
		logger.warn(warning);
		return warning;
	}

	/**
	 * When a quorum of the nodes a lock of these slots goes to counts, as far as the
	 * quarantines tell.
	 */
	private long firstLockAt(VoterLayout.KeyRange range, long now) {
		long[] countsAt = new long[range.nodes().length];
		// how long until each voter's node counts, soonest first: the quorum-th decides
		for (int voter = 0; voter < countsAt.length; voter++) {
			countsAt[voter] = this.quarantines.get(range.nodes()[voter]).remainingNanosAt(now);
		}
		Arrays.sort(countsAt);
		return now + countsAt[this.quorum.size() - 1];
	}

	/** The slots of the ranges, adjacent ones joined: {@code 0-5460, 10923-16383}. */
	private static String slots(List<VoterLayout.KeyRange> ranges) {
		StringBuilder text = new StringBuilder();
		int first = -1;
		int last = -1;
		for (VoterLayout.KeyRange range : ranges) {
			if (first >= 0 && range.firstSlot() == last + 1) {
				last = range.lastSlot();
				continue;
			}
			if (first >= 0) {
				text.append(text.isEmpty() ? "" : ", ").append(first).append('-').append(last);
			}
			first = range.firstSlot();
			last = range.lastSlot();
		}
		return text.append(text.isEmpty() ? "" : ", ").append(first).append('-').append(last).toString();
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

	/** The layout now: a cluster voter's slots may move from shard to shard. */
	private VoterLayout layout() {
		return this.layouts.get();
	}

}
