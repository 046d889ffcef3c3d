package dev.redlock.core;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The thread of a {@link Redlock} that reads the replies a settled round did not wait for (a slow node's, once the
 * others had decided), so the caller goes on while each connection still gets its reply read before it is reused.
 * A single daemon thread that exists only while there is such work, and stops with {@link #close()}.
 */
final class LateReplies implements AutoCloseable {

	/** Prefix of the thread's name, followed by a number per {@link Redlock}. */
	static final String THREAD_NAME_PREFIX = "redlock-late-replies-";

	private static final AtomicInteger instances = new AtomicInteger();

	private final ThreadPoolExecutor executor;

	LateReplies() {
		String name = THREAD_NAME_PREFIX + instances.incrementAndGet();
		this.executor = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), (task) -> {
			Thread thread = new Thread(task, name);
			thread.setDaemon(true);
			return thread;
		});
		this.executor.allowCoreThreadTimeOut(true);
	}

	/**
	 * Runs the reading task, or, once closed, the fallback instead (on the calling thread).
	 * @param task reads the replies and returns the connection
	 * @param whenClosed returns the connection unread (it is then closed with its pool)
	 */
	void execute(Runnable task, Runnable whenClosed) {
		try {
			this.executor.execute(task);
		}
		catch (RejectedExecutionException ex) {
			whenClosed.run();
		}
	}

	@Override
	public void close() {
		this.executor.shutdown();
	}

}
