package dev.redlock.interceptor;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.RedlockSettings;

/**
 * The rules that join a method's {@code @DistributedLock} durations to the settings of
 * the {@code Redlock} that serves them, checked when the application starts: a
 * {@code ttl} must leave validity after the clock drift allowance, and a {@code minHold}
 * may not outlast the restart quarantine, the longest time a lock key may live on a node.
 * A {@code ttl} longer than the quarantine is served, not refused: the lock is taken with
 * the quarantine as its TTL and renewed while the method runs, up to the {@code ttl}, as
 * the ShedLock provider serves a long {@code lockAtMostFor}; a crashed holder's lock then
 * runs out sooner, never later.
 */
final class LockTerms {

	private LockTerms() {
	}

	/**
	 * Checks a method's durations against the settings.
	 * @throws IllegalStateException naming the method, the attribute, the values and the
	 * ways out
	 */
	static void verify(LockAttributes attributes, RedlockSettings settings) {
		Duration ttl = attributes.ttl();
		if (ttl != null) {
			Duration drift = settings.driftFor(ttl);
			if (ttl.compareTo(drift) <= 0) {
				String judged = settings.restartQuarantine().isZero() ? ""
						: " + 3 × " + settings.clockTolerance().toMillis() + " ms, redlock.clock-tolerance";
				throw invalid(attributes, "ttl", ttl,
						"leaves no validity after the clock drift allowance of " + drift.toMillis() + " ms ("
								+ settings.clockDriftFactor() + " × ttl + 2 ms, redlock.clock-drift-factor" + judged
								+ "); give a ttl of at least " + smallestTtlMillis(settings)
								+ " ms, in practice a few hundred milliseconds or more");
			}
		}
		Duration quarantine = settings.restartQuarantine();
		Duration minHold = attributes.minHold();
		if (minHold != null && !quarantine.isZero() && minHold.compareTo(quarantine) > 0) {
			throw invalid(attributes, "minHold", minHold,
					"outlasts the restart quarantine (redlock.restart-quarantine = " + quarantine
							+ "), the longest time a lock key may live on a node: a node that restarts counts again "
							+ "after it, and must not while it may have forgotten the lock; shorten minHold to at "
							+ "most " + quarantine + ", or raise redlock.restart-quarantine");
		}
	}

	/**
	 * Describes how a {@code ttl} longer than the restart quarantine is served, for the
	 * startup log.
	 * @return the description, or {@code null} when the ttl is served as it is
	 */
	static @Nullable String servedByRenewal(LockAttributes attributes, RedlockSettings settings) {
		Duration ttl = attributes.ttl();
		Duration quarantine = settings.restartQuarantine();
		if (ttl == null || !exceeds(ttl, quarantine)) {
			return null;
		}
		return "ttl " + ttl + " of " + attributes.description() + " is longer than the restart quarantine ("
				+ "redlock.restart-quarantine = " + quarantine + "), which caps every TTL: the lock is taken with a "
				+ quarantine + " TTL and renewed while the method runs, up to " + ttl;
	}

	/**
	 * Whether a TTL is longer than the restart quarantine allows on the nodes.
	 */
	static boolean exceeds(Duration ttl, Duration quarantine) {
		return !quarantine.isZero() && ttl.compareTo(quarantine) > 0;
	}

	/** The smallest TTL, in whole milliseconds, longer than its drift allowance. */
	private static long smallestTtlMillis(RedlockSettings settings) {
		long millis = 1;
		while (Duration.ofMillis(millis).compareTo(settings.driftFor(Duration.ofMillis(millis))) <= 0) {
			millis++;
		}
		return millis;
	}

	private static IllegalStateException invalid(LockAttributes attributes, String attribute, Duration value,
			String problem) {
		return new IllegalStateException("Invalid @DistributedLock on " + attributes.description() + ": attribute '"
				+ attribute + "' (" + value + ") " + problem);
	}

}
