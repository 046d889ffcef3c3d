package dev.redlock.core.internal.lease;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToLongFunction;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.thread.RenewalScheduler;

/**
 * The leases a {@code Redlock} holds: acquired and not released. Those that are never
 * released are let go once their validity is over, by a sweep on the renewal thread that
 * runs when the earliest validity ends, so nothing is kept for ever without anyone
 * asking.
 * <p>
 * While leases keep coming, a sweep stays scheduled even when it finds none left (a
 * single thread that locks and unlocks holds none between its locks): the next lease then
 * finds a sweep due and goes on at once. Once a sweep comes after no new lease, sweeping
 * stops until the next one. Besides sparing the scheduling, this keeps a steady stream of
 * locks off the path that schedules a sweep: first taken a validity after start-up, it
 * had made the JIT throw away the acquisition it had compiled without it.
 */
public final class HeldLeases<L> {

	/** The least delay between two sweeps. */
	private static final long MIN_SWEEP_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

	/**
	 * How much later than a lease's end the sweep that lets it go may come: the
	 * validities of leases taken one after another differ by a little, and each would
	 * otherwise move the sweep.
	 */
	private static final long SWEEP_SLACK_NANOS = MIN_SWEEP_DELAY_NANOS;

	private final Set<L> leases = ConcurrentHashMap.newKeySet();

	/** A lease's remaining validity in nanoseconds, zero once it is over. */
	private final ToLongFunction<L> remainingNanos;

	private final Scheduler scheduler;

	/** Guards the scheduling of sweeps. */
	private final Object sweepLock = new Object();

	private @Nullable ScheduledFuture<?> sweep;

	private volatile boolean sweepScheduled;

	/** {@link System#nanoTime()} when the scheduled sweep is due. */
	private volatile long sweepDueNanos;

	/**
	 * The validity of the last lease recorded since the last sweep began, zero when none
	 * was.
	 */
	private final AtomicLong addedSinceSweep = new AtomicLong();

	/**
	 * @param scheduler runs the sweeps ({@link RenewalScheduler#schedule} in a
	 * {@code Redlock})
	 * @param remainingNanos a lease's remaining validity in nanoseconds, zero once over
	 */
	public HeldLeases(Scheduler scheduler, ToLongFunction<L> remainingNanos) {
		this.scheduler = scheduler;
		this.remainingNanos = remainingNanos;
	}

	/**
	 * Records a lease, and makes sure it is let go once its validity is over.
	 * @param lease the new lease
	 * @param validityNanos its validity, from now
	 */
	public void add(L lease, long validityNanos) {
		this.leases.add(lease);
		// written by every lease, without a test that most would skip and the JIT would
		// then leave out; a release store, as cheap as a plain one
		this.addedSinceSweep.setRelease(Math.max(1, validityNanos));
		sweepWithin(validityNanos);
	}

	/** Forgets a released lease. */
	void remove(Object lease) {
		this.leases.remove(lease);
	}

	/** The leases still valid, a snapshot; drops the others on the way. */
	public List<L> valid() {
		this.leases.removeIf((lease) -> this.remainingNanos.applyAsLong(lease) <= 0);
		return List.copyOf(this.leases);
	}

	/**
	 * When the next sweep is due, {@link System#nanoTime()}, or {@code null} when none is
	 * scheduled: for tests.
	 */
	@Nullable Long nextSweepNanos() {
		synchronized (this.sweepLock) {
			return this.sweepScheduled ? this.sweepDueNanos : null;
		}
	}

	/** How many leases are recorded, without sweeping. */
	public int size() {
		return this.leases.size();
	}

	/** Forgets every lease. */
	public List<L> removeAll() {
		List<L> all = List.copyOf(this.leases);
		this.leases.removeAll(all);
		return all;
	}

	/**
	 * Makes sure a sweep of the held leases runs once a validity of this length is over
	 * (within {@link #SWEEP_SLACK_NANOS}): leases that are never released are dropped
	 * without anyone asking. Cheap when a sweep is due by then (the usual case: the same
	 * TTL again).
	 */
	private void sweepWithin(long validityNanos) {
		long due = System.nanoTime() + Math.max(MIN_SWEEP_DELAY_NANOS, validityNanos);
		if (this.sweepScheduled && this.sweepDueNanos - due <= SWEEP_SLACK_NANOS) {
			return;
		}
		synchronized (this.sweepLock) {
			if (!this.sweepScheduled || this.sweepDueNanos - due > SWEEP_SLACK_NANOS) {
				scheduleAt(due);
			}
		}
	}

	/**
	 * Drops the leases whose validity is over; runs again when the next one's ends, or,
	 * with none left, a validity after the last lease recorded since the last sweep, if
	 * any was.
	 */
	private void sweepNow() {
		synchronized (this.sweepLock) {
			// still counted as scheduled (and due): leases recorded meanwhile go on at
			// once, and this sweep schedules the next
			this.sweep = null;
		}
		long added = this.addedSinceSweep.getAndSet(0);
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
		if (next != Long.MAX_VALUE || added > 0) {
			scheduleNext((next != Long.MAX_VALUE) ? next + TimeUnit.MILLISECONDS.toNanos(1) : added);
			return;
		}
		synchronized (this.sweepLock) {
			if (this.sweep == null) {
				this.sweepScheduled = false;
			}
		}
		// a lease recorded while this sweep ran found it scheduled and went on: it is in
		// the set by now, and gets a sweep of its own
		if (!this.leases.isEmpty()) {
			scheduleNext(MIN_SWEEP_DELAY_NANOS);
		}
	}

	/** Schedules the sweep after the one running now, unless one is due no later. */
	private void scheduleNext(long delayNanos) {
		long due = System.nanoTime() + Math.max(MIN_SWEEP_DELAY_NANOS, delayNanos);
		synchronized (this.sweepLock) {
			if (this.sweep == null || due - this.sweepDueNanos < 0) {
				scheduleAt(due);
			}
		}
	}

	/** Schedules a sweep in place of the one scheduled, if any; holds the sweep lock. */
	private void scheduleAt(long due) {
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
			this.sweep = null;
			this.sweepScheduled = false;
		}
	}

	/** Runs a task once, after a delay. */
	@FunctionalInterface
	public interface Scheduler {

		/**
		 * Runs the task after the delay.
		 * @param task what to run
		 * @param delayNanos how long from now
		 * @return the scheduled run, to cancel
		 * @throws IllegalStateException once no more runs are taken (the {@code Redlock}
		 * was closed)
		 */
		ScheduledFuture<?> schedule(Runnable task, long delayNanos);

	}

}
