package dev.redlock.shedlock;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.Lease;
import dev.redlock.core.LockRequest;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockSettings;

/**
 * A ShedLock {@link LockProvider} on Redlock: ShedLock's {@code @SchedulerLock} jobs get
 * a lock held by a quorum of independent Redis nodes instead of one database or one Redis
 * server. Swap it in as the {@code LockProvider} bean (the starter does so when ShedLock
 * is on the classpath and no other provider is defined).
 *
 * <p>
 * It keeps ShedLock's contract, extension included ({@link ExtensibleLockProvider}):
 * <ul>
 * <li>Each job name is a lock: resource {@code shedlock:<name>}, lock name (in metrics)
 * {@code <name>}, one attempt without waiting.</li>
 * <li>{@code lockAtMostFor} bounds the hold. When it is longer than the restart
 * quarantine (which caps every TTL), the lock is taken or extended with the quarantine as
 * its TTL and renewed while the job runs, up to {@code lockAtMostFor}; a crashed
 * instance's lock then runs out sooner, never later. When it is shorter than the smallest
 * TTL a quorum can grant with validity left ({@link #smallestTtl(RedlockSettings)}), that
 * TTL is used (logged once per job); past {@code lockAtMostFor} such a lock cannot be
 * extended.</li>
 * <li>{@code lockAtLeastFor} keeps the lock after a fast run, counted from the
 * acquisition or from the extension that set it: the key is then left to expire instead
 * of deleted. A hold longer than the lock's TTL (the restart quarantine) is kept by
 * renewing the lock after the job ended, on a thread of this provider, until the rest of
 * the hold fits in its TTL; {@link #close()} (on shutdown) releases such locks with their
 * hold at once, so that they expire with the TTL they last got.</li>
 * <li>A lock handle is single-use: after {@code unlock()} or {@code extend(...)} it
 * throws {@link IllegalStateException}. {@code extend} returns empty when the lock can no
 * longer be extended (expired, lost, or extended as often as
 * {@code redlock.max-extensions} allows); in the last case the job may still be running,
 * so its lock stays taken until the {@code lockAtMostFor} it already had.</li>
 * </ul>
 */
public final class RedlockLockProvider implements ExtensibleLockProvider, AutoCloseable {

	/** What each job's resource starts with. */
	public static final String RESOURCE_PREFIX = "shedlock:";

	/** Validity the smallest TTL leaves after the clock drift allowance. */
	private static final Duration SMALLEST_VALIDITY = Duration.ofMillis(50);

	private static final Logger logger = LoggerFactory.getLogger(RedlockLockProvider.class);

	private final Redlock redlock;

	private final Duration smallestTtl;

	/** Jobs already told that their {@code lockAtMostFor} was raised. */
	private final Set<String> raised = ConcurrentHashMap.newKeySet();

	/** Locks kept after their job for a {@code lockAtLeastFor} longer than their TTL. */
	private final LongHolds longHolds = new LongHolds();

	/**
	 * Creates a provider.
	 * @param redlock the lock client
	 */
	public RedlockLockProvider(Redlock redlock) {
		this.redlock = redlock;
		this.smallestTtl = smallestTtl(redlock.settings());
	}

	/**
	 * The smallest TTL this provider gives a lock: one whose clock drift allowance leaves
	 * 50 ms of validity, so that a quorum grants it even on a loaded machine.
	 * @param settings the settings, for the clock drift factor
	 * @return the smallest TTL, in whole milliseconds
	 */
	public static Duration smallestTtl(RedlockSettings settings) {
		double factor = settings.clockDriftFactor();
		long needed = SMALLEST_VALIDITY.plus(settings.driftFor(Duration.ZERO)).toNanos();
		return Duration.ofMillis((long) Math.ceil(needed / (1 - factor) / 1e6));
	}

	@Override
	public Optional<SimpleLock> lock(LockConfiguration configuration) {
		String name = configuration.getName();
		Duration atMost = configuration.getLockAtMostFor();
		Duration ttl = ttlFor(name, atMost);
		return this.redlock.tryAcquire(LockRequest.of(RESOURCE_PREFIX + name, ttl).named(name)).map((lease) -> {
			if (ttl.compareTo(atMost) < 0) {
				lease.autoRenew(atMost);
			}
			return new RedlockSimpleLock(configuration, lease, lease.heldFor(), ttl);
		});
	}

	/**
	 * Releases the locks still kept for a {@code lockAtLeastFor} longer than their TTL,
	 * with that hold: their keys expire with the TTL they last got. Locks taken later are
	 * released at the end of their job as usual, their hold cut to their TTL.
	 */
	@Override
	public void close() {
		this.longHolds.close();
	}

	/** How many locks are kept now for a {@code lockAtLeastFor} longer than their TTL. */
	int longHoldsKept() {
		return this.longHolds.size();
	}

	/**
	 * {@code lockAtMostFor}, capped by the restart quarantine (a TTL may not exceed it)
	 * and raised to the smallest usable TTL.
	 */
	private Duration ttlFor(String name, Duration atMost) {
		Duration quarantine = this.redlock.settings().restartQuarantine();
		if (!quarantine.isZero() && quarantine.compareTo(atMost) < 0) {
			return quarantine;
		}
		if (atMost.compareTo(this.smallestTtl) < 0) {
			if (this.raised.add(name)) {
				logger.info(
						"lockAtMostFor of job '{}' ({} ms) is shorter than the smallest TTL a quorum grants "
								+ "reliably; its lock lives {} ms",
						name, atMost.toMillis(), this.smallestTtl.toMillis());
			}
			return this.smallestTtl;
		}
		return atMost;
	}

	@Override
	public String toString() {
		return "RedlockLockProvider" + this.redlock.nodeAddresses();
	}

	/**
	 * One job run's lock, or its extension: single-use, as every ShedLock lock.
	 */
	private final class RedlockSimpleLock extends AbstractSimpleLock {

		private final Lease lease;

		/** When this handle's configuration starts, as the lease's hold time. */
		private final Duration startedAfter;

		/** The TTL the lease was given for this handle's configuration. */
		private final Duration ttl;

		RedlockSimpleLock(LockConfiguration configuration, Lease lease, Duration startedAfter, Duration ttl) {
			super(configuration);
			this.lease = lease;
			this.startedAfter = startedAfter;
			this.ttl = ttl;
		}

		@Override
		protected void doUnlock() {
			Duration minHold = this.startedAfter.plus(this.lockConfiguration.getLockAtLeastFor());
			// only a lock whose TTL is cut by the quarantine can be given less than its
			// hold
			boolean renewed = this.ttl.compareTo(this.lockConfiguration.getLockAtMostFor()) < 0;
			if (renewed && LongHolds.outlasts(this.lease, minHold)) {
				RedlockLockProvider.this.longHolds.keep(this.lease, minHold, this.ttl);
			}
			else {
				this.lease.release(minHold);
			}
		}

		@Override
		protected Optional<SimpleLock> doExtend(LockConfiguration extension) {
			Duration startedAfter = this.lease.heldFor();
			if (!ClockProvider.now().isBefore(this.lockConfiguration.getLockAtMostUntil()) || !this.lease.isValid()) {
				// its lockAtMostFor is over: as far as ShedLock knows, it expired
				this.lease.release();
				return Optional.empty();
			}
			Duration atMost = extension.getLockAtMostFor();
			Duration ttl = ttlFor(extension.getName(), atMost);
			boolean renewing = this.lease.isAutoRenewing();
			this.lease.stopAutoRenew();
			boolean extended;
			try {
				extended = this.lease.extend(ttl);
			}
			catch (IllegalStateException ex) {
				// extended as often as allowed: the job may still be running, so its lock
				// stays taken until this handle's lockAtMostFor, as with any provider
				logger.info("Lock of job '{}' cannot be extended: {}", extension.getName(), ex.getMessage());
				if (renewing) {
					this.lease.autoRenew(this.startedAfter.plus(this.lockConfiguration.getLockAtMostFor()));
				}
				return Optional.empty();
			}
			if (!extended) {
				this.lease.release();
				return Optional.empty();
			}
			if (ttl.compareTo(atMost) < 0) {
				this.lease.autoRenew(startedAfter.plus(atMost));
			}
			return Optional.of(new RedlockSimpleLock(extension, this.lease, startedAfter, ttl));
		}

	}

}
