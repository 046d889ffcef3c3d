package dev.redlock.core.internal.lease;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.LossReason;
import dev.redlock.core.RedlockListener.ExtendOutcome;
import dev.redlock.core.internal.ExtensionRequest;
import dev.redlock.core.internal.ScriptRounds;
import dev.redlock.core.internal.thread.RenewalScheduler;

/**
 * Keeps an eye on one lease from the {@link RenewalScheduler}: renews it a third of its
 * TTL after each (re)validation while renewal is on (together with the other leases due
 * then, see {@link RenewalBatches}), and otherwise wakes up when its validity ends, to
 * signal the loss of a lease that was not released in time. Each run reschedules the next
 * one; nothing runs once the lease is released or lost.
 *
 * <p>
 * Runs and reschedules under the lease's state lock, so that {@code Lease.release()},
 * which cancels it before and again under that lock, never leaves a run scheduled behind
 * it (a renewal that finds the lock busy is retried shortly, a run that finds the watch
 * cancelled if the lease was released meanwhile). Listeners are told and loss is
 * signalled after leaving the lock: for a renewal, once every lease of its batch is
 * unlocked.
 */
final class LeaseWatch implements Runnable, BatchedRenewal {

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

		/** The TTL the nodes were last given for the lease. */
		long ttlNanos();

		/**
		 * Starts a renewal by that TTL, under the state lock held by the caller.
		 * @return what to ask of the nodes, or {@code null} when the validity ran out
		 */
		@Nullable ExtensionRequest beginRenewal();

		/**
		 * Takes in a renewal's result, under the state lock held by the caller.
		 * @param extension what the nodes said, or {@code null} when the round failed
		 */
		ExtendOutcome finishRenewal(ExtensionRequest request, ScriptRounds.@Nullable Extension extension);

		/** Tells the listeners of a renewal; called outside the state lock. */
		void renewed(ExtendOutcome outcome);

		/** Signals the loss; called outside the state lock. */
		void lost(LossReason reason);

		String name();

		String resource();

		Duration heldFor();

	}

	private static final Logger logger = LoggerFactory.getLogger(LeaseWatch.class);

	/**
	 * How soon a renewal is tried again when another thread holds the lease's state lock
	 * (an extension or release is under way).
	 */
	private static final long BUSY_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	private final Target lease;

	private final RenewalScheduler scheduler;

	/**
	 * Where renewals go, together with the other leases due; {@code null} when watching.
	 */
	private final @Nullable RenewalBatches batches;

	/**
	 * Ticker reading after which the lease is no longer renewed; ignored when not
	 * renewing.
	 */
	private final long renewUntilNanos;

	private volatile boolean renewing;

	private volatile boolean cancelled;

	private volatile @Nullable ScheduledFuture<?> next;

	private LeaseWatch(Target lease, RenewalScheduler scheduler, @Nullable RenewalBatches batches,
			long renewUntilNanos) {
		this.lease = lease;
		this.scheduler = scheduler;
		this.batches = batches;
		this.renewing = batches != null;
		this.renewUntilNanos = renewUntilNanos;
	}

	/** A watch that renews the lease until {@code renewUntilNanos} (ticker time). */
	static LeaseWatch renewing(Target lease, RenewalBatches batches, long renewUntilNanos) {
		return new LeaseWatch(lease, batches.scheduler(), batches, renewUntilNanos);
	}

	/** A watch that only signals the loss when the validity ends before release. */
	static LeaseWatch watching(Target lease, RenewalScheduler scheduler) {
		return new LeaseWatch(lease, scheduler, null, 0);
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
	@Override
	public void cancel() {
		this.cancelled = true;
		this.renewing = false;
		ScheduledFuture<?> scheduled = this.next;
		if (scheduled != null) {
			scheduled.cancel(false);
		}
	}

	@Override
	public void run() {
		boolean due = false;
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
				due = true;
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
		if (due && this.batches != null) {
			this.batches.add(this, this.lease.ttlNanos());
		}
		if (lost != null) {
			this.renewing = false;
			this.lease.lost(lost);
		}
	}

	/**
	 * Starts the renewal in a batch, on the renewal thread: takes the lease's state lock,
	 * held until {@link #finishBatched}, unless another thread holds it (the run is then
	 * tried again shortly).
	 * @param reports where to leave what the listeners are to be told and the loss to
	 * signal, once every lease of the batch is unlocked
	 * @return what to ask of the nodes, or {@code null} when nothing is to be asked: the
	 * lock was busy, the watch has ended, or the renewal failed at once
	 */
	@Override
	public @Nullable ExtensionRequest beginBatched(List<Runnable> reports) {
		ReentrantLock lock = this.lease.stateLock();
		if (!lock.tryLock()) {
			scheduleIn(BUSY_RETRY_NANOS);
			return null;
		}
		ExtensionRequest request = null;
		ExtendOutcome failure = null;
		try {
			if (this.cancelled || this.lease.isOver()) {
				return null;
			}
			request = this.lease.beginRenewal();
			if (request == null) {
				warnNotCounted(ExtendOutcome.EXPIRED);
				failure = ExtendOutcome.EXPIRED;
			}
		}
		catch (Throwable ex) {
			warnFailed(ex);
			failure = ExtendOutcome.FAILED;
		}
		finally {
			if (request == null) {
				lock.unlock();
			}
		}
		if (failure != null) {
			this.renewing = false;
			ExtendOutcome outcome = failure;
			reports.add(() -> renewed(outcome));
		}
		return request;
	}

	/**
	 * Ends a renewal started by {@link #beginBatched}: takes in the nodes' answer,
	 * schedules the next run, and leaves the state lock.
	 * @param extension what the nodes said, or {@code null} when the round failed
	 * @param reports where to leave what the listeners are to be told and the loss to
	 * signal, once every lease of the batch is unlocked
	 */
	@Override
	public void finishBatched(ExtensionRequest request, ScriptRounds.@Nullable Extension extension,
			List<Runnable> reports) {
		ExtendOutcome outcome = ExtendOutcome.FAILED;
		try {
			outcome = this.lease.finishRenewal(request, extension);
			if (outcome == ExtendOutcome.EXTENDED) {
				scheduleNext(this.lease.now());
			}
			else {
				warnNotCounted(outcome);
			}
		}
		catch (Throwable ex) {
			warnFailed(ex);
			outcome = ExtendOutcome.FAILED;
		}
		finally {
			if (outcome != ExtendOutcome.EXTENDED) {
				this.renewing = false;
			}
			this.lease.stateLock().unlock();
		}
		ExtendOutcome finished = outcome;
		reports.add(() -> renewed(finished));
	}

	/**
	 * Tells the listeners of a renewal, outside the state lock; one that did not count
	 * ends the renewal and signals the loss.
	 */
	private void renewed(ExtendOutcome outcome) {
		this.lease.renewed(outcome);
		if (outcome != ExtendOutcome.EXTENDED) {
			this.lease
				.lost((outcome == ExtendOutcome.EXPIRED) ? LossReason.VALIDITY_RAN_OUT : LossReason.EXTENSION_FAILED);
		}
	}

	private void warnFailed(Throwable ex) {
		logger.warn("Renewing lock '{}' on '{}' failed; the lease is lost", this.lease.name(), this.lease.resource(),
				ex);
	}

	private void warnNotCounted(ExtendOutcome outcome) {
		logger.warn("Renewing lock '{}' on '{}' did not count ({}); the lease is lost after {} ms", this.lease.name(),
				this.lease.resource(), outcome.tag(), this.lease.heldFor().toMillis());
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

	private void scheduleNext(long now) {
		scheduleIn(delay(now));
	}

	private void scheduleIn(long delayNanos) {
		if (this.cancelled) {
			return;
		}
		try {
			this.next = this.scheduler.schedule(this, delayNanos);
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
