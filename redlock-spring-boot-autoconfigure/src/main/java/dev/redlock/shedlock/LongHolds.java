package dev.redlock.shedlock;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.Lease;

/**
 * Keeps the locks of jobs that ended before their {@code lockAtLeastFor} when that hold
 * outlasts what the nodes were given (a TTL is at most the restart quarantine): each
 * lease goes on being renewed, and is released with its hold once the rest of it fits in
 * the validity left, so that its keys expire when the hold ends.
 *
 * <p>
 * One daemon thread, started by the first such lock, waits for them all. On
 * {@link #close()} every lock still kept is released with its hold at once: its keys then
 * expire with the TTL they last got, before the hold ends if that was longer.
 */
final class LongHolds implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(LongHolds.class);

	/** The shortest wait before a kept lock is looked at again. */
	private static final long MIN_STEP_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	private final Set<Hold> kept = ConcurrentHashMap.newKeySet();

	private final ReentrantLock schedulerLock = new ReentrantLock();

	private @Nullable ScheduledThreadPoolExecutor scheduler;

	private boolean closed;

	/**
	 * Whether a lease released now with {@code minHold} would end its hold early: the
	 * rest of the hold lies beyond its validity.
	 */
	static boolean outlasts(Lease lease, Duration minHold) {
		return lease.isValid() && minHold.minus(lease.heldFor()).compareTo(lease.remainingValidity()) > 0;
	}

	/**
	 * Keeps a lease until {@code minHold} after its acquisition, renewing it by its TTL,
	 * then leaves its keys to expire then.
	 * @param lease the lease, not released
	 * @param minHold the hold, counted from the acquisition
	 * @param ttl the TTL the lease is renewed by
	 */
	void keep(Lease lease, Duration minHold, Duration ttl) {
		Hold hold = new Hold(lease, minHold, ttl);
		try {
			lease.autoRenew(minHold);
		}
		catch (IllegalStateException ex) {
			// its Redlock is closed: nothing renews it any more
			lease.release(minHold);
			return;
		}
		this.kept.add(hold);
		// half a TTL before the hold ends, a renewal has given the nodes more than that
		schedule(hold, minHold.minus(lease.heldFor()).minus(ttl.dividedBy(2)).toNanos());
	}

	private void schedule(Hold hold, long delayNanos) {
		ScheduledThreadPoolExecutor executor = executor();
		try {
			if (executor != null) {
				executor.schedule(hold, Math.max(delayNanos, 0), TimeUnit.NANOSECONDS);
				return;
			}
		}
		catch (RejectedExecutionException ex) {
			// closed meanwhile
		}
		hold.release();
	}

	/** The scheduler, started on first use; {@code null} once closed. */
	private @Nullable ScheduledThreadPoolExecutor executor() {
		this.schedulerLock.lock();
		try {
			if (this.closed) {
				return null;
			}
			if (this.scheduler == null) {
				ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, (task) -> {
					Thread thread = new Thread(task, "redlock-shedlock-holds");
					thread.setDaemon(true);
					return thread;
				});
				executor.setRemoveOnCancelPolicy(true);
				executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
				this.scheduler = executor;
			}
			return this.scheduler;
		}
		finally {
			this.schedulerLock.unlock();
		}
	}

	/** How many locks are kept now. */
	int size() {
		return this.kept.size();
	}

	/**
	 * Stops the thread and releases every lock still kept, with its hold: its keys expire
	 * with the TTL they last got.
	 */
	@Override
	public void close() {
		ScheduledThreadPoolExecutor executor;
		this.schedulerLock.lock();
		try {
			this.closed = true;
			executor = this.scheduler;
		}
		finally {
			this.schedulerLock.unlock();
		}
		if (executor != null) {
			executor.shutdownNow();
		}
		for (Hold hold : this.kept) {
			hold.release();
		}
	}

	/** One kept lock: released with its hold once the rest fits in the validity left. */
	private final class Hold implements Runnable {

		private final Lease lease;

		private final Duration minHold;

		private final long stepNanos;

		Hold(Lease lease, Duration minHold, Duration ttl) {
			this.lease = lease;
			this.minHold = minHold;
			this.stepNanos = Math.max(ttl.toNanos() / 20, MIN_STEP_NANOS);
		}

		@Override
		public void run() {
			try {
				if (outlasts(this.lease, this.minHold) && this.lease.isAutoRenewing()) {
					// a renewal is late (a loaded machine): look again shortly
					schedule(this, this.stepNanos);
					return;
				}
			}
			catch (Throwable ex) {
				logger.warn("Keeping the lock '{}' until its lockAtLeastFor failed", this.lease.name(), ex);
			}
			release();
		}

		void release() {
			if (!LongHolds.this.kept.remove(this)) {
				return;
			}
			try {
				this.lease.release(this.minHold);
			}
			catch (Throwable ex) {
				// its keys expire with their TTL
				logger.warn("Releasing the lock '{}' after its lockAtLeastFor failed", this.lease.name(), ex);
			}
		}

	}

}
