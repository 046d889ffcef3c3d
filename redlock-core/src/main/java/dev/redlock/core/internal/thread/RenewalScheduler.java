package dev.redlock.core.internal.thread;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

/**
 * The one thread of a {@code Redlock} that renews and watches its leases, and lets go of
 * expired ones: a single daemon thread, started on first use, ended after 30 s with
 * nothing scheduled, and stopped by {@link #close()}. Cancelled runs are removed at once,
 * so released leases leave nothing queued.
 *
 * <p>
 * Renewals run on this thread itself rather than being handed to a pool, the leases due
 * together in one round ({@code RenewalBatches}, up to 256 a round). A round takes at
 * most the node timeout (two when a node lost its script cache), since all nodes are
 * asked at once, and is due a third of the TTL after the last validation, leaving two
 * thirds of the TTL before the lease would run out. With the defaults (TTL 30 s, node
 * timeout 100 ms) about a hundred rounds could be due at the same moment, with every node
 * at its timeout, before one came too late; a late renewal fails closed (the lease is
 * marked lost), never extends an expired lock.
 */
public final class RenewalScheduler implements AutoCloseable {

	/** Prefix of the thread's name, followed by a number per {@code Redlock}. */
	public static final String THREAD_NAME_PREFIX = "redlock-renewal-";

	private static final AtomicInteger instances = new AtomicInteger();

	private final String threadName = THREAD_NAME_PREFIX + instances.incrementAndGet();

	private @Nullable ScheduledThreadPoolExecutor executor;

	private boolean closed;

	/**
	 * Runs a task after a delay, starting the thread if needed.
	 * @param task what to run
	 * @param delayNanos how long from now; zero or less runs it as soon as possible
	 * @return the scheduled run, to cancel
	 * @throws IllegalStateException if the {@code Redlock} was closed
	 */
	public synchronized ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
		if (this.closed) {
			throw new IllegalStateException("This Redlock is closed: its leases can no longer be renewed or watched");
		}
		if (this.executor == null) {
			ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, (runnable) -> {
				Thread thread = new Thread(runnable, this.threadName);
				thread.setDaemon(true);
				return thread;
			});
			executor.setRemoveOnCancelPolicy(true);
			// the thread ends when nothing has been scheduled for a while (a worker stays
			// while runs are queued)
			executor.setKeepAliveTime(30, TimeUnit.SECONDS);
			executor.allowCoreThreadTimeOut(true);
			executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
			this.executor = executor;
		}
		return this.executor.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
	}

	/** How many runs are scheduled now, for tests that watch for a pile-up. */
	public synchronized int scheduledRuns() {
		return (this.executor != null) ? this.executor.getQueue().size() : 0;
	}

	/**
	 * Returns the name of the thread, whether started or not.
	 * @return e.g. {@code redlock-renewal-1}
	 */
	public String threadName() {
		return this.threadName;
	}

	/**
	 * Stops the thread; scheduled runs are dropped. Leases still held expire with their
	 * TTL.
	 */
	@Override
	public synchronized void close() {
		this.closed = true;
		if (this.executor != null) {
			this.executor.shutdownNow();
		}
	}

}
