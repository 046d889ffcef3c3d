package dev.redlock.core.internal.lease;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.internal.ExtensionRequest;
import dev.redlock.core.internal.ScriptRounds;
import dev.redlock.core.internal.thread.RenewalScheduler;

/**
 * Renews the leases that fall due at about the same time together, on the renewal thread:
 * their extensions go to each node in one write
 * ({@link ScriptRounds#extend(List, List)}), so a {@code Redlock} that keeps thousands of
 * leases renewed pays one round per batch, not one per lease. The first lease due opens a
 * batch, which is sent a moment later (a thirtieth of its TTL, at most
 * {@value #MAX_WAIT_MILLIS} ms: a renewal is due with two thirds of the TTL left) or as
 * soon as it holds {@value #MAX_BATCH} leases. Each lease is still judged on its own
 * nodes' answers and its own validity.
 */
public final class RenewalBatches {

	/**
	 * The most leases renewed in one round: a node runs them in well under a millisecond,
	 * far within any node timeout.
	 */
	public static final int MAX_BATCH = 256;

	/** The longest a due renewal waits for others to join it. */
	static final long MAX_WAIT_MILLIS = 10;

	private static final Logger logger = LoggerFactory.getLogger(RenewalBatches.class);

	private final RenewalScheduler scheduler;

	private final ScriptRounds extension;

	private final ArrayDeque<BatchedRenewal> due = new ArrayDeque<>();

	/** Whether a run that sends what is due is scheduled; guarded by this. */
	private boolean sendScheduled;

	/** When that run is due ({@link System#nanoTime()}); guarded by this. */
	private long sendAt;

	RenewalBatches(RenewalScheduler scheduler, ScriptRounds extension) {
		this.scheduler = scheduler;
		this.extension = extension;
	}

	/** The renewal thread, on which batches are sent. */
	RenewalScheduler scheduler() {
		return this.scheduler;
	}

	/**
	 * Adds a lease whose renewal is due to the next batch, which is sent no later than
	 * this lease may wait.
	 * @param ttlNanos the lease's TTL, which bounds how long it waits for others
	 */
	synchronized void add(BatchedRenewal watch, long ttlNanos) {
		this.due.add(watch);
		long wait = Math.min(TimeUnit.MILLISECONDS.toNanos(MAX_WAIT_MILLIS), ttlNanos / 30);
		if (this.due.size() % MAX_BATCH == 0) {
			// full: sent now
			scheduleSend(0);
		}
		else if (!this.sendScheduled || System.nanoTime() + wait - this.sendAt < 0) {
			scheduleSend(wait);
		}
	}

	/**
	 * Schedules a run that sends what is due; once the {@code Redlock} is closed, none
	 * is, and the leases expire with their TTL. A run scheduled earlier stays: it sends
	 * what is due by then, or nothing.
	 */
	private void scheduleSend(long delayNanos) {
		try {
			this.scheduler.schedule(this::sendDue, delayNanos);
			this.sendScheduled = true;
			this.sendAt = System.nanoTime() + delayNanos;
		}
		catch (IllegalStateException ex) {
			this.due.forEach(BatchedRenewal::cancel);
			this.due.clear();
		}
	}

	private void sendDue() {
		List<BatchedRenewal> batch;
		synchronized (this) {
			batch = new ArrayList<>(Math.min(this.due.size(), MAX_BATCH));
			while (batch.size() < MAX_BATCH && !this.due.isEmpty()) {
				batch.add(this.due.poll());
			}
			this.sendScheduled = false;
			if (!this.due.isEmpty()) {
				scheduleSend(0);
			}
		}
		renew(batch);
	}

	/**
	 * Renews a batch in one round. Every lease whose renewal was started is finished,
	 * whatever happens: its state lock is held until then. Listeners are told, and losses
	 * signalled, only once every lease of the batch is unlocked, so that they may touch
	 * any lease.
	 */
	private void renew(List<BatchedRenewal> batch) {
		List<BatchedRenewal> started = new ArrayList<>(batch.size());
		List<ExtensionRequest> requests = new ArrayList<>(batch.size());
		List<Runnable> reports = new ArrayList<>(batch.size() + 1);
		ScriptRounds.Extension[] extensions = null;
		try {
			for (BatchedRenewal watch : batch) {
				ExtensionRequest request = begin(watch, reports);
				if (request != null) {
					started.add(watch);
					requests.add(request);
				}
			}
			if (!requests.isEmpty()) {
				extensions = this.extension.extend(requests, reports);
			}
		}
		catch (Throwable ex) {
			logger.warn("Renewing {} leases failed; they are lost", requests.size(), ex);
		}
		finally {
			for (int i = 0; i < started.size(); i++) {
				finish(started.get(i), requests.get(i), (extensions != null) ? extensions[i] : null, reports);
			}
		}
		for (Runnable report : reports) {
			try {
				report.run();
			}
			catch (Throwable ex) {
				logger.warn("Telling of a renewal failed", ex);
			}
		}
	}

	private static @Nullable ExtensionRequest begin(BatchedRenewal watch, List<Runnable> reports) {
		try {
			return watch.beginBatched(reports);
		}
		catch (Throwable ex) {
			// not started, so not locked: nothing more is asked, the lease runs out
			logger.warn("Starting the renewal of a lease failed", ex);
			watch.cancel();
			return null;
		}
	}

	private static void finish(BatchedRenewal watch, ExtensionRequest request,
			ScriptRounds.@Nullable Extension extension, List<Runnable> reports) {
		try {
			watch.finishBatched(request, extension, reports);
		}
		catch (Throwable ex) {
			logger.warn("Finishing the renewal of a lease failed", ex);
		}
	}

}
