package dev.redlock.core.internal.transport;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Protocol.Command;

/**
 * Follows a Sentinel voter's master: a thread ({@code redlock-sentinel-<name>}) that
 * listens to one sentinel for {@code +switch-master} and {@code +reset-master}, and asks
 * the sentinels where the master is every {@link #REFRESH_NANOS second} besides, in case
 * a message was missed or the sentinel listened to went away. Nothing it hears is taken
 * on trust: {@link MasterAddress} moves only to a server that says it is a master.
 */
final class SentinelWatch implements AutoCloseable {

	/** Prefix of the thread's name, followed by the voter's name. */
	static final String THREAD_NAME_PREFIX = "redlock-sentinel-";

	/** How often the sentinels are asked, whatever they announce. */
	static final long REFRESH_NANOS = TimeUnit.SECONDS.toNanos(1);

	/**
	 * How often the subscription is looked at for a message: a plain read would block
	 * past the next refresh.
	 */
	private static final long LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

	private static final Logger logger = LoggerFactory.getLogger(SentinelWatch.class);

	private static final byte[] MESSAGE = "message".getBytes(StandardCharsets.US_ASCII);

	private static final String SWITCH_MASTER = "+switch-master";

	private static final String RESET_MASTER = "+reset-master";

	private final RedisNodeUri uri;

	private final MasterAddress master;

	private final int timeoutMillis;

	private final long backoffNanos;

	private final Thread thread;

	private final AtomicBoolean started = new AtomicBoolean();

	private volatile boolean closed;

	private volatile @Nullable PipelinedConnection subscription;

	SentinelWatch(RedisNodeUri uri, MasterAddress master, int timeoutMillis, long backoffNanos) {
		this.uri = uri;
		this.master = master;
		this.timeoutMillis = timeoutMillis;
		this.backoffNanos = backoffNanos;
		this.thread = new Thread(this::watch, THREAD_NAME_PREFIX + uri.name());
		this.thread.setDaemon(true);
	}

	/** Starts the thread, once. */
	void start() {
		if (this.started.compareAndSet(false, true)) {
			this.thread.start();
		}
	}

	private void watch() {
		int next = 0;
		while (!this.closed) {
			List<HostAndPort> sentinels = this.master.sentinels();
			HostAndPort sentinel = sentinels.get(next % sentinels.size());
			try {
				listen(sentinel);
			}
			catch (Throwable ex) {
				if (!this.closed) {
					logger.debug("Redlock voter {}: no longer listening to the sentinel {}: {}", this.uri.redacted(),
							SentinelGroup.format(sentinel), ex.toString());
				}
			}
			finally {
				PipelinedConnection current = this.subscription;
				this.subscription = null;
				if (current != null) {
					current.abort();
				}
			}
			next++;
			if (!this.closed) {
				// close() wakes the thread early
				LockSupport.parkNanos(this, this.backoffNanos);
			}
		}
	}

	/**
	 * Subscribes to one sentinel's announcements and asks the sentinels where the master
	 * is every refresh, until the sentinel fails to answer a {@code PING} by the next
	 * refresh, or the watch is closed.
	 */
	private void listen(HostAndPort sentinel) {
		PipelinedConnection connection = new PipelinedConnection(sentinel,
				this.master.sentinelConfig(this.timeoutMillis));
		this.subscription = connection;
		if (this.closed) {
			return;
		}
		// sendCommand and getUnflushedObject: a subscription's messages answer no call
		connection.sendCommand(new CommandArguments(Command.SUBSCRIBE).add(SWITCH_MASTER).add(RESET_MASTER));
		connection.flushNow();
		long nextRefresh = System.nanoTime();
		boolean pingAnswered = true;
		while (!this.closed) {
			long now = System.nanoTime();
			if (now - nextRefresh >= 0) {
				if (!pingAnswered) {
					throw new IllegalStateException("the sentinel did not answer a PING within a second");
				}
				refresh();
				connection.sendCommand(new CommandArguments(Command.PING));
				connection.flushNow();
				pingAnswered = false;
				nextRefresh = System.nanoTime() + REFRESH_NANOS;
				continue;
			}
			if (!connection.replyArrived()) {
				LockSupport.parkNanos(this, Math.min(LOOK_NANOS, nextRefresh - now));
				continue;
			}
			Object reply = connection.getUnflushedObject();
			if (reply instanceof List<?> parts && parts.size() == 3 && parts.get(0) instanceof byte[] kind
					&& Arrays.equals(kind, MESSAGE) && parts.get(1) instanceof byte[] channel
					&& parts.get(2) instanceof byte[] payload) {
				heard(new String(channel, StandardCharsets.UTF_8), new String(payload, StandardCharsets.UTF_8));
			}
			else {
				// a subscription's confirmation, or the PING's answer
				pingAnswered = true;
			}
		}
	}

	/**
	 * An announcement: {@code +switch-master <name> <old-ip> <old-port> <new-ip>
	 * <new-port>}, or {@code +reset-master master <name> <ip> <port>}.
	 */
	private void heard(String channel, String payload) {
		String[] words = payload.split(" ");
		String masterName = this.uri.sentinel().masterName();
		if (channel.equals(SWITCH_MASTER) && words.length == 5 && words[0].equals(masterName)) {
			try {
				this.master.announced(new HostAndPort(words[3], Integer.parseInt(words[4])), this.timeoutMillis);
			}
			catch (RuntimeException ex) {
				logger.debug("Redlock voter {}: the announced master not followed yet: {}", this.uri.redacted(),
						ex.toString());
			}
		}
		else if (channel.equals(RESET_MASTER) && words.length >= 2 && words[1].equals(masterName)) {
			refresh();
		}
	}

	private void refresh() {
		try {
			this.master.refresh(this.timeoutMillis);
		}
		catch (RuntimeException ex) {
			logger.debug("Redlock voter {}: the sentinels not asked: {}", this.uri.redacted(), ex.toString());
		}
	}

	/** Ends the thread; never blocks. */
	@Override
	public void close() {
		this.closed = true;
		PipelinedConnection current = this.subscription;
		if (current != null) {
			current.abort();
		}
		LockSupport.unpark(this.thread);
	}

}
