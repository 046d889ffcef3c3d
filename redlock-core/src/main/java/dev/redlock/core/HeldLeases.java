package dev.redlock.core;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

import org.jspecify.annotations.Nullable;

/**
 * The leases a {@link Redlock} holds: acquired and not released. Those that are never
 * released are let go once their validity is over, by a sweep on the renewal thread that
 * runs when the earliest validity ends, so nothing is kept for ever without anyone
 * asking.
 */
final class HeldLeases<L> {

	/** The least delay between two sweeps. */
	private static final long MIN_SWEEP_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

	private final Set<L> leases = ConcurrentHashMap.newKeySet();

	/** A lease's remaining validity in nanoseconds, zero once it is over. */
	private final ToLongFunction<L> remainingNanos;

	private final RenewalScheduler scheduler;

	/** Guards the scheduling of sweeps. */
	private final Object sweepLock = new Object();

	private @Nullable ScheduledFuture<?> sweep;

	private volatile boolean sweepScheduled;

	/** {@link System#nanoTime()} when the scheduled sweep is due. */
	private volatile long sweepDueNanos;

	HeldLeases(RenewalScheduler scheduler, ToLongFunction<L> remainingNanos) {
		this.scheduler = scheduler;
		this.remainingNanos = remainingNanos;
	}

	/**
	 * Records a lease, and makes sure it is let go once its validity is over.
	 * @param lease the new lease
	 * @param validityNanos its validity, from now
	 */
	void add(L lease, long validityNanos) {
		this.leases.add(lease);
		sweepWithin(validityNanos);
	}

	/** Forgets a released lease. */
	void remove(Object lease) {
		this.leases.remove(lease);
	}

	/** The leases still valid, a snapshot; drops the others on the way. */
	List<L> valid() {
		this.leases.removeIf((lease) -> this.remainingNanos.applyAsLong(lease) <= 0);
		return List.copyOf(this.leases);
	}

	/** How many leases are recorded, without sweeping. */
	int size() {
		return this.leases.size();
	}

	/** Forgets every lease. */
	List<L> removeAll() {
		List<L> all = List.copyOf(this.leases);
		this.leases.removeAll(all);
		return all;
	}

	/**
	 * Makes sure a sweep of the held leases runs once a validity of this length is over:
	 * leases that are never released are dropped without anyone asking. Cheap when a
	 * sweep is due no later (the usual case: the same TTL again).
	 */
	private void sweepWithin(long validityNanos) {
		long due = System.nanoTime() + Math.max(MIN_SWEEP_DELAY_NANOS, validityNanos);
		if (this.sweepScheduled && due - this.sweepDueNanos >= 0) {
			return;
		}
		synchronized (this.sweepLock) {
			if (this.sweepScheduled && due - this.sweepDueNanos >= 0) {
				return;
			}
			if (this.sweep != null) {
				this.sweep.cancel(false);
			}
			try {
				this.sweep = this.scheduler.schedule(this::sweepNow, due - System.nanoTime());
				this.sweepDueNanos = due;
				this.sweepScheduled = true;
			}
			catch (IllegalStateException ex) {
				// closed: close() let go of every lease
			}
		}
	}

	/** Drops the leases whose validity is over; runs again when the next one's ends. */
	private void sweepNow() {
		synchronized (this.sweepLock) {
			this.sweepScheduled = false;
			this.sweep = null;
		}
		long next = Long.MAX_VALUE;
		for (L lease : this.leases) {
			long left = this.remainingNanos.applyAsLong(lease);
			if (left <= 0) {
				this.leases.remove(lease);
			}
			else {
				next = Math.min(next, left);
			}
		}
		if (next != Long.MAX_VALUE) {
			sweepWithin(next + TimeUnit.MILLISECONDS.toNanos(1));
		}
	}

}
