package dev.redlock.shedlock;

import java.time.Duration;
import java.util.Optional;

import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

import dev.redlock.core.Lease;
import dev.redlock.core.Redlock;

/**
 * A ShedLock {@link LockProvider} on Redlock: ShedLock's {@code @SchedulerLock} jobs get
 * a lock held by a quorum of independent Redis nodes instead of one database or one Redis
 * server. Swap it in as the {@code LockProvider} bean (the starter does so when ShedLock
 * is on the classpath and no other provider is defined).
 *
 * <p>
 * Each job name is a lock: resource {@code shedlock:<name>}, lock name (in metrics)
 * {@code <name>}, one attempt without waiting, as ShedLock expects. {@code lockAtMostFor}
 * bounds the hold. When it is longer than the restart quarantine (which caps every TTL),
 * the lock is taken with the quarantine as its TTL and renewed while the job runs, up to
 * {@code lockAtMostFor}; a crashed instance's lock then runs out sooner, never later.
 * {@code lockAtLeastFor} keeps the lock after a fast run (the key is left to expire
 * then), up to the lock's TTL.
 */
public final class RedlockLockProvider implements LockProvider {

	/** What each job's resource starts with. */
	public static final String RESOURCE_PREFIX = "shedlock:";

	private final Redlock redlock;

	/**
	 * Creates a provider.
	 * @param redlock the lock client
	 */
	public RedlockLockProvider(Redlock redlock) {
		this.redlock = redlock;
	}

	@Override
	public Optional<SimpleLock> lock(LockConfiguration configuration) {
		Duration atMost = configuration.getLockAtMostFor();
		Duration ttl = ttlFor(atMost);
		return this.redlock.tryAcquire(configuration.getName(), RESOURCE_PREFIX + configuration.getName(), ttl)
			.map((lease) -> {
				if (ttl.compareTo(atMost) < 0) {
					lease.autoRenew(atMost);
				}
				return new RedlockSimpleLock(lease, configuration.getLockAtLeastFor());
			});
	}

	/**
	 * {@code lockAtMostFor}, or the restart quarantine when that is shorter (a TTL may
	 * not exceed it).
	 */
	private Duration ttlFor(Duration atMost) {
		Duration quarantine = this.redlock.settings().restartQuarantine();
		return (!quarantine.isZero() && quarantine.compareTo(atMost) < 0) ? quarantine : atMost;
	}

	@Override
	public String toString() {
		return "RedlockLockProvider" + this.redlock.nodeAddresses();
	}

	/** One job run's lock. */
	private static final class RedlockSimpleLock implements SimpleLock {

		private final Lease lease;

		private final Duration atLeast;

		RedlockSimpleLock(Lease lease, Duration atLeast) {
			this.lease = lease;
			this.atLeast = atLeast;
		}

		@Override
		public void unlock() {
			this.lease.release(this.atLeast);
		}

		@Override
		public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
			if (!this.lease.extend(lockAtMostFor)) {
				return Optional.empty();
			}
			return Optional.of(new RedlockSimpleLock(this.lease, lockAtLeastFor));
		}

	}

}
