package dev.redlock.core;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.RedlockListener.ExtendOutcome;

/**
 * Keeps an eye on one lease from the {@link RenewalScheduler}: renews it a third of its
 * TTL after each (re)validation while renewal is on, and otherwise wakes up when its
 * validity ends, to signal the loss of a lease that was not released in time. Each run
 * reschedules the next one; nothing runs once the lease is released or lost.
 *
 * <p>
 * Runs and reschedules under the lease's state lock, so that {@link Lease#release()},
 * which cancels it before and again under that lock, never leaves a run scheduled behind
 * it. Loss is signalled after leaving the lock.
 */
final class LeaseWatch implements Runnable {

	/** What a watch reads of its lease, and what it asks of it. */
	interface Target {

		/** The lock that guards the lease's extension, release and watch. */
		ReentrantLock stateLock();

		/** Whether the lease was released or lost. */
		boolean isOver();

		/** The lease's ticker reading now. */
		long now();

		/** Ticker reading at which the validity ends. */
		long validUntilNanos();

		/**
		 * Ticker reading at which a renewal is due: a third of the TTL after the last
		 * validation.
		 */
		long renewalDueNanos();

		/** Extends by the TTL, under the state lock held by the caller. */
		ExtendOutcome renew();

		/** Tells the listeners of a renewal; called outside the state lock. */
		void renewed(ExtendOutcome outcome);

		/** Signals the loss; called outside the state lock. */
		void lost(LossReason reason);

		String name();

		String resource();

		Duration heldFor();

	}

	private static final Logger logger = LoggerFactory.getLogger(LeaseWatch.class);

	private final Target lease;

	private final RenewalScheduler scheduler;

	/**
	 * Ticker reading after which the lease is no longer renewed; ignored when not
	 * renewing.
	 */
	private final long renewUntilNanos;

	private volatile boolean renewing;

	private volatile boolean cancelled;

	private volatile @Nullable ScheduledFuture<?> next;

	private LeaseWatch(Target lease, RenewalScheduler scheduler, boolean renewing, long renewUntilNanos) {
		this.lease = lease;
		this.scheduler = scheduler;
		this.renewing = renewing;
		this.renewUntilNanos = renewUntilNanos;
	}

	/** A watch that renews the lease until {@code renewUntilNanos} (ticker time). */
	static LeaseWatch renewing(Target lease, RenewalScheduler scheduler, long renewUntilNanos) {
		return new LeaseWatch(lease, scheduler, true, renewUntilNanos);
	}

	/** A watch that only signals the loss when the validity ends before release. */
	static LeaseWatch watching(Target lease, RenewalScheduler scheduler) {
		return new LeaseWatch(lease, scheduler, false, 0);
	}

	/** Whether this watch renews until that ticker time. */
	boolean renewsUntil(long renewUntilNanos) {
		return isRenewing() && this.renewUntilNanos == renewUntilNanos;
	}

	boolean isRenewing() {
		return this.renewing && !this.cancelled;
	}

	/**
	 * Schedules the first run; call under the lease's state lock.
	 * @throws IllegalStateException if the {@code Redlock} was closed
	 */
	void start() {
		this.next = this.scheduler.schedule(this, delay(this.lease.now()));
	}

	/** Stops for good; a run in progress finishes but schedules nothing more. */
	void cancel() {
		this.cancelled = true;
		this.renewing = false;
		ScheduledFuture<?> scheduled = this.next;
		if (scheduled != null) {
			scheduled.cancel(false);
		}
	}

	@Override
	public void run() {
		ExtendOutcome renewal = null;
		LossReason lost = null;
		this.lease.stateLock().lock();
		try {
			if (this.cancelled || this.lease.isOver()) {
				return;
			}
			long now = this.lease.now();
			if (this.lease.validUntilNanos() - now <= 0) {
				lost = LossReason.VALIDITY_RAN_OUT;
			}
			else if (this.renewing && mayRenew(now)) {
				renewal = renew();
				if (renewal == ExtendOutcome.EXTENDED) {
					scheduleNext(this.lease.now());
				}
				else {
					lost = (renewal == ExtendOutcome.EXPIRED) ? LossReason.VALIDITY_RAN_OUT
							: LossReason.EXTENSION_FAILED;
				}
			}
			else {
				// not renewing: wake up when the validity ends, in case the lease is not
				// released by then
				scheduleNext(now);
			}
		}
		finally {
			this.lease.stateLock().unlock();
		}
		// outside the lease's lock: listeners and callbacks may touch the lease
		if (renewal != null) {
			this.lease.renewed(renewal);
		}
		if (lost != null) {
			this.renewing = false;
			this.lease.lost(lost);
		}
	}

	private boolean mayRenew(long now) {
		if (now - this.renewUntilNanos < 0) {
			return true;
		}
		this.renewing = false;
		logger.info(
				"Lock '{}' on '{}' is no longer renewed: it was held for its maxHold ({} ms held); it expires in "
						+ "{} ms unless released",
				this.lease.name(), this.lease.resource(), this.lease.heldFor().toMillis(),
				Duration.ofNanos(this.lease.validUntilNanos() - now).toMillis());
		return false;
	}

	/** Extends once, by the lease's TTL. */
	private ExtendOutcome renew() {
		ExtendOutcome outcome;
		try {
			outcome = this.lease.renew();
		}
		catch (RuntimeException ex) {
			logger.warn("Renewing lock '{}' on '{}' failed; the lease is lost", this.lease.name(),
					this.lease.resource(), ex);
			return ExtendOutcome.FAILED;
		}
		if (outcome != ExtendOutcome.EXTENDED) {
			logger.warn("Renewing lock '{}' on '{}' did not count ({}); the lease is lost after {} ms",
					this.lease.name(), this.lease.resource(), outcome.tag(), this.lease.heldFor().toMillis());
		}
		return outcome;
	}

	private void scheduleNext(long now) {
		if (this.cancelled) {
			return;
		}
		try {
			this.next = this.scheduler.schedule(this, delay(now));
		}
		catch (IllegalStateException ex) {
			// the Redlock was closed: leases left behind expire with their TTL
			this.renewing = false;
			this.cancelled = true;
		}
	}

	/**
	 * Renewal a third of the TTL after the last validation; otherwise just after the
	 * validity ends.
	 */
	private long delay(long now) {
		if (this.renewing) {
			return this.lease.renewalDueNanos() - now;
		}
		return this.lease.validUntilNanos() - now + 1_000_000;
	}

}
