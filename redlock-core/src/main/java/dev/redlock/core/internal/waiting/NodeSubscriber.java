package dev.redlock.core.internal.waiting;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.RedlockSettings;
import dev.redlock.core.internal.protocol.LockScripts;
import dev.redlock.core.internal.protocol.RawArgument;
import dev.redlock.core.internal.thread.RenewalScheduler;
import dev.redlock.core.internal.transport.NodeConnectionPool;
import dev.redlock.core.internal.transport.PipelinedConnection;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;

/**
 * One node's subscription to the {@link LockScripts#RELEASE release channels} of the keys
 * that threads of a {@code Redlock} wait for. It has a connection of its own and one
 * daemon thread that reads it; both exist only while some key is waited for, and for
 * {@link #LINGER_NANOS} after, so that bursts of contention do not reconnect each time. A
 * subscription that is down (the node is, or the connection dropped) costs the waiting
 * threads only this node's notices: they hear from the other nodes, and they poll.
 * Reconnects after the pool's backoff.
 */
public final class NodeSubscriber implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(NodeSubscriber.class);

	/** How long the connection stays open once no key is waited for. */
	static final long LINGER_NANOS = TimeUnit.SECONDS.toNanos(30);

	/** Prefix of the reading thread's name, followed by its node's {@code host:port}. */
	public static final String THREAD_NAME_PREFIX = "redlock-notices-";

	private static final byte[] CHANNEL_PREFIX = LockScripts.RELEASED_CHANNEL_PREFIX.getBytes(StandardCharsets.UTF_8);

	private static final byte[] MESSAGE = "message".getBytes(StandardCharsets.US_ASCII);

	private static final byte[] SUBSCRIBED = "subscribe".getBytes(StandardCharsets.US_ASCII);

	/** What hears from this node about one key. */
	interface Listener {

		/**
		 * The node confirmed the subscription: from now on it announces every release of
		 * the key.
		 * @param node the node's index
		 */
		void subscribed(int node);

		/**
		 * The node announced that the key was released.
		 * @param value the value that held it
		 */
		void released(byte[] value);

	}

	private final int node;

	private final NodeConnectionPool pool;

	private final int timeoutMillis;

	private final long backoffNanos;

	private final RenewalScheduler scheduler;

	private final ReentrantLock lock = new ReentrantLock();

	/** Keys waited for, by {@link RawArgument#id() id}; guarded by {@link #lock}. */
	private final Map<String, Listener> wanted = new HashMap<>();

	/**
	 * Keys whose subscription the current connection confirmed; guarded by {@link #lock}.
	 */
	private final Set<String> confirmed = new HashSet<>();

	private @Nullable PipelinedConnection connection;

	/** The writes of the current connection; guarded by {@link #lock}. */
	private @Nullable NoticeWrites writes;

	private final long timeoutNanos;

	private @Nullable Thread reader;

	private long idleSince;

	/**
	 * Whether a task to close the idle connection is scheduled; guarded by {@link #lock}.
	 */
	private boolean closeScheduled;

	private boolean closed;

	/** One subscriber per node, in node order. */
	public static List<NodeSubscriber> forEach(List<NodeConnectionPool> pools, RedlockSettings settings,
			RenewalScheduler scheduler) {
		List<NodeSubscriber> subscribers = new ArrayList<>(pools.size());
		for (int i = 0; i < pools.size(); i++) {
			subscribers.add(new NodeSubscriber(i, pools.get(i), settings.nodeTimeout().toNanos(),
					NodeConnectionPool.reconnectBackoff(settings).toNanos(), scheduler));
		}
		return subscribers;
	}

	NodeSubscriber(int node, NodeConnectionPool pool, long timeoutNanos, long backoffNanos,
			RenewalScheduler scheduler) {
		this.node = node;
		this.pool = pool;
		this.timeoutMillis = (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeoutNanos));
		this.timeoutNanos = timeoutNanos;
		this.backoffNanos = backoffNanos;
		this.scheduler = scheduler;
		pool.master().onMoved(this::masterMoved);
	}

	/**
	 * The voter's master moved: the subscription is ended, and the reader subscribes
	 * again, on the new master, to every key still waited for.
	 */
	private void masterMoved() {
		PipelinedConnection current;
		this.lock.lock();
		try {
			current = this.connection;
		}
		finally {
			this.lock.unlock();
		}
		if (current != null) {
			current.abort();
		}
	}

	/**
	 * Subscribes to a key's releases, without waiting: the listener hears
	 * {@link Listener#subscribed} once the node confirms (at once if it already had),
	 * then every release. A listener replaces an earlier one of the same key. Never call
	 * it holding a lock the listener takes.
	 * @param key the key's {@link RawArgument#id() id}
	 * @param listener what to tell
	 */
	void subscribe(String key, Listener listener) {
		boolean alreadyConfirmed;
		NoticeWrites toFlush = null;
		this.lock.lock();
		try {
			if (this.closed) {
				return;
			}
			Listener previous = this.wanted.put(key, listener);
			alreadyConfirmed = previous != null && this.confirmed.contains(key);
			if (previous == null) {
				if (this.connection != null) {
					toFlush = queue(new CommandArguments(Command.SUBSCRIBE).add(channel(key)));
				}
				else if (this.reader == null) {
					Thread thread = new Thread(this::read, THREAD_NAME_PREFIX + this.pool.uri().name());
					thread.setDaemon(true);
					this.reader = thread;
					thread.start();
				}
			}
		}
		finally {
			this.lock.unlock();
		}
		if (toFlush != null) {
			toFlush.flush();
		}
		if (alreadyConfirmed) {
			listener.subscribed(this.node);
		}
	}

	/**
	 * Ends a key's subscription, if the listener is still the key's.
	 * @param key the key's {@link RawArgument#id() id}
	 * @param listener the listener given to {@link #subscribe}
	 */
	void unsubscribe(String key, Listener listener) {
		NoticeWrites toFlush = null;
		this.lock.lock();
		try {
			if (!this.wanted.remove(key, listener)) {
				return;
			}
			this.confirmed.remove(key);
			if (this.connection != null) {
				toFlush = queue(new CommandArguments(Command.UNSUBSCRIBE).add(channel(key)));
			}
			if (this.wanted.isEmpty()) {
				this.idleSince = System.nanoTime();
				if (!this.closeScheduled) {
					this.closeScheduled = true;
					closeWhenIdle(LINGER_NANOS);
				}
			}
		}
		finally {
			this.lock.unlock();
		}
		if (toFlush != null) {
			toFlush.flush();
		}
	}

	/**
	 * Whether this node confirmed the key's subscription on the current connection: a
	 * release there then counts this subscriber among those it told.
	 * @param key the key's {@link RawArgument#id() id}
	 * @return {@code true} if subscribed
	 */
	boolean isSubscribed(String key) {
		this.lock.lock();
		try {
			return this.confirmed.contains(key);
		}
		finally {
			this.lock.unlock();
		}
	}

	/** Closes the connection, and so ends the thread, if nothing was waited for since. */
	private void closeWhenIdle(long delayNanos) {
		try {
			this.scheduler.schedule(() -> {
				this.lock.lock();
				try {
					long idleFor = System.nanoTime() - this.idleSince;
					if (this.wanted.isEmpty() && this.connection != null && idleFor < LINGER_NANOS) {
						// waited for again and left since: one task per subscriber, never
						// more
						closeWhenIdle(LINGER_NANOS - idleFor);
						return;
					}
					this.closeScheduled = false;
					if (!this.wanted.isEmpty() || this.connection == null) {
						return;
					}
					this.connection.abort();
					this.connection = null;
					this.writes = null;
				}
				finally {
					this.lock.unlock();
				}
			}, delayNanos);
		}
		catch (IllegalStateException ex) {
			// the Redlock is closing: close() ends the connection
			this.closeScheduled = false;
		}
	}

	/**
	 * Queues a command for the current connection; the caller holds the lock, and flushes
	 * the returned writes after letting it go.
	 */
	private NoticeWrites queue(CommandArguments command) {
		NoticeWrites current = this.writes;
		current.queue(command);
		return current;
	}

	/**
	 * The reading thread: connects while some key is waited for, subscribes to all, and
	 * passes on what it hears.
	 */
	private void read() {
		for (PipelinedConnection current = connectWhileWanted(); current != null; current = connectWhileWanted()) {
			try {
				while (true) {
					dispatch(current.getUnflushedObject());
				}
			}
			catch (RuntimeException ex) {
				logger.debug("Release notices from {} interrupted; subscribing again", this.pool.uri().redacted(), ex);
			}
			this.lock.lock();
			try {
				if (this.connection == current) {
					this.connection = null;
					this.writes = null;
					this.confirmed.clear();
				}
			}
			finally {
				this.lock.unlock();
			}
			current.abort();
		}
	}

	/**
	 * Opens a connection and subscribes it to every key waited for; {@code null} once
	 * nothing is, or closed.
	 */
	private @Nullable PipelinedConnection connectWhileWanted() {
		while (true) {
			if (!stillWanted()) {
				return null;
			}
			try {
				PipelinedConnection opened = this.pool.connect(this.timeoutMillis);
				// a subscriber waits for messages as long as it takes
				opened.setSoTimeout(0);
				NoticeWrites toFlush;
				this.lock.lock();
				try {
					if (this.closed || this.wanted.isEmpty()) {
						this.reader = null;
						opened.abort();
						return null;
					}
					if (!this.pool.master().isCurrent(opened)) {
						// the voter's master moved while it was being opened: under the
						// lock that masterMoved() reads the connection under
						opened.abort();
						continue;
					}
					this.connection = opened;
					this.writes = new NoticeWrites(opened, this.scheduler, this.timeoutNanos);
					List<String> keys = new ArrayList<>(this.wanted.keySet());
					CommandArguments subscribe = new CommandArguments(Command.SUBSCRIBE);
					keys.forEach((key) -> subscribe.add(channel(key)));
					toFlush = queue(subscribe);
				}
				finally {
					this.lock.unlock();
				}
				toFlush.flush();
				return opened;
			}
			catch (RuntimeException ex) {
				logger.debug("No release notices from {} for now: {}", this.pool.uri().redacted(), ex.toString());
				// close() wakes this thread early
				LockSupport.parkNanos(this, this.backoffNanos);
			}
		}
	}

	/**
	 * Whether the thread should go on; if not, it is marked ended, under the lock, so a
	 * new key starts another.
	 */
	private boolean stillWanted() {
		this.lock.lock();
		try {
			if (this.closed || this.wanted.isEmpty()) {
				this.reader = null;
				return false;
			}
			return true;
		}
		finally {
			this.lock.unlock();
		}
	}

	private void dispatch(@Nullable Object reply) {
		if (!(reply instanceof List<?> parts) || parts.size() < 3 || !(parts.get(0) instanceof byte[] kind)
				|| !(parts.get(1) instanceof byte[] channel) || !startsWithPrefix(channel)) {
			return;
		}
		String key = new String(channel, CHANNEL_PREFIX.length, channel.length - CHANNEL_PREFIX.length,
				StandardCharsets.ISO_8859_1);
		boolean message = Arrays.equals(kind, MESSAGE);
		if (!message && !Arrays.equals(kind, SUBSCRIBED)) {
			return;
		}
		Listener listener;
		this.lock.lock();
		try {
			listener = this.wanted.get(key);
			if (listener != null && !message) {
				this.confirmed.add(key);
			}
		}
		finally {
			this.lock.unlock();
		}
		if (listener == null) {
			return;
		}
		if (!message) {
			listener.subscribed(this.node);
		}
		else if (parts.get(2) instanceof byte[] value) {
			listener.released(value);
		}
	}

	private static boolean startsWithPrefix(byte[] channel) {
		return channel.length >= CHANNEL_PREFIX.length
				&& Arrays.equals(channel, 0, CHANNEL_PREFIX.length, CHANNEL_PREFIX, 0, CHANNEL_PREFIX.length);
	}

	/** The channel on which the key's releases are announced. */
	private static byte[] channel(String key) {
		byte[] keyBytes = key.getBytes(StandardCharsets.ISO_8859_1);
		byte[] channel = Arrays.copyOf(CHANNEL_PREFIX, CHANNEL_PREFIX.length + keyBytes.length);
		System.arraycopy(keyBytes, 0, channel, CHANNEL_PREFIX.length, keyBytes.length);
		return channel;
	}

	/** Ends the subscription and its thread. */
	@Override
	public void close() {
		Thread thread;
		this.lock.lock();
		try {
			this.closed = true;
			if (this.connection != null) {
				this.connection.abort();
				this.connection = null;
				this.writes = null;
			}
			thread = this.reader;
		}
		finally {
			this.lock.unlock();
		}
		if (thread != null) {
			LockSupport.unpark(thread);
		}
	}

}
