package dev.redlock.core.internal.waiting;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.internal.thread.RenewalScheduler;
import dev.redlock.core.internal.transport.PipelinedConnection;
import redis.clients.jedis.CommandArguments;

/**
 * The commands a {@link NodeSubscriber} writes on its connection ({@code SUBSCRIBE},
 * {@code UNSUBSCRIBE}), in the order they were asked for, without ever holding the
 * subscriber's lock while writing. Whoever asks writes what is queued, unless another
 * thread is writing already (it then writes this command too), so no thread waits for
 * another's write. A write that stalls (a frozen node stops reading: its socket buffers
 * fill, and a blocking write has no timeout of its own) is cut after the node timeout by
 * closing the connection, so that even the writing thread is held at most that long; the
 * subscriber's reader then sees the connection end and subscribes again on a new one.
 */
final class NoticeWrites {

	private static final Logger logger = LoggerFactory.getLogger(NoticeWrites.class);

	private final PipelinedConnection connection;

	private final RenewalScheduler scheduler;

	private final long timeoutNanos;

	private final ConcurrentLinkedQueue<CommandArguments> queue = new ConcurrentLinkedQueue<>();

	private final ReentrantLock writing = new ReentrantLock();

	NoticeWrites(PipelinedConnection connection, RenewalScheduler scheduler, long timeoutNanos) {
		this.connection = connection;
		this.scheduler = scheduler;
		this.timeoutNanos = timeoutNanos;
	}

	/**
	 * Queues a command, in order: call it holding the subscriber's lock.
	 * @param command the command
	 */
	void queue(CommandArguments command) {
		this.queue.add(command);
	}

	/**
	 * Writes what is queued, unless another thread is at it: call it without holding the
	 * subscriber's lock. Returns within about the node timeout.
	 */
	void flush() {
		while (!this.queue.isEmpty() && this.writing.tryLock()) {
			try {
				writeQueued();
			}
			finally {
				this.writing.unlock();
			}
		}
	}

	private void writeQueued() {
		ScheduledFuture<?> watchdog = watch();
		try {
			for (CommandArguments next = this.queue.poll(); next != null; next = this.queue.poll()) {
				this.connection.send(next);
			}
			this.connection.flushNow();
		}
		catch (RuntimeException ex) {
			// the reader sees the connection end, and subscribes again on a new one
			this.queue.clear();
			this.connection.abort();
		}
		finally {
			if (watchdog != null) {
				watchdog.cancel(false);
			}
		}
	}

	/** Closes the connection if the write has not ended within the node timeout. */
	private @Nullable ScheduledFuture<?> watch() {
		try {
			return this.scheduler.schedule(() -> {
				logger.debug("A subscription write to {} stalled for the node timeout: closing its connection",
						this.connection);
				this.connection.abort();
			}, this.timeoutNanos);
		}
		catch (IllegalStateException ex) {
			// the Redlock is closing: close() ends the connection
			return null;
		}
	}

}
