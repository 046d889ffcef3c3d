package dev.redlock.core.internal.thread;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A single daemon thread of a {@code Redlock} for work that must not run on the thread
 * that found it: it exists only while there is such work, runs tasks in order, and stops
 * with {@link #close()}. Each node has one that reads the replies a settled round did not
 * wait for (a slow node's, once the others had decided), in the order the node answers
 * them, so the caller goes on while each connection still gets its replies read before it
 * is reused; another runs the loss callbacks of leases whose loss the renewal thread
 * found, so a slow callback delays no renewal.
 */
public final class OnDemandThread implements AutoCloseable {

	/** Prefix of a late-reply thread's name, followed by its node's {@code host:port}. */
	public static final String LATE_REPLIES = "redlock-late-replies-";

	/**
	 * Prefix of the loss-callback thread's name, followed by a number per
	 * {@code Redlock}.
	 */
	public static final String LOSS_CALLBACKS = "redlock-lease-lost-";

	private static final AtomicInteger instances = new AtomicInteger();

	private final String threadName;

	private final ThreadPoolExecutor executor;

	/**
	 * Creates the executor; its thread starts with the first task.
	 * @param threadName the thread's name, e.g. {@link #numbered
	 * numbered(LOSS_CALLBACKS)}
	 */
	public OnDemandThread(String threadName) {
		this.threadName = threadName;
		this.executor = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), (task) -> {
			Thread thread = new Thread(task, this.threadName);
			thread.setDaemon(true);
			return thread;
		});
		this.executor.allowCoreThreadTimeOut(true);
	}

	/**
	 * Returns a thread name unique in this JVM.
	 * @param prefix e.g. {@link #LOSS_CALLBACKS}
	 * @return the prefix followed by a number
	 */
	public static String numbered(String prefix) {
		return prefix + instances.incrementAndGet();
	}

	/**
	 * Runs the task on this thread, or, once closed, the fallback instead (on the calling
	 * thread).
	 * @param task the work
	 * @param whenClosed what to do instead once closed
	 */
	public void execute(Runnable task, Runnable whenClosed) {
		try {
			this.executor.execute(task);
		}
		catch (RejectedExecutionException ex) {
			whenClosed.run();
		}
	}

	/**
	 * Returns how many tasks wait for their turn, the one running left out.
	 * @return tasks queued
	 */
	public int queued() {
		return this.executor.getQueue().size();
	}

	/**
	 * Returns the name of the thread, whether started or not.
	 * @return e.g. {@code redlock-lease-lost-1}
	 */
	public String threadName() {
		return this.threadName;
	}

	/** Stops taking tasks; those already queued still run, then the thread ends. */
	@Override
	public void close() {
		this.executor.shutdown();
	}

}
