package dev.redlock.core.internal.transport;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.TlsSettings;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Opens connections to one node: with its credentials and TLS settings, greeted (see
 * {@link NodeGreeting}), on the node's own connector thread when asked to work in the
 * background. After a failed attempt the node is left alone for the back-off, so that a
 * dead node costs nothing and queues nothing. The thread exists only while connections
 * are being opened.
 */
final class NodeConnector {

	private final RedisNodeUri uri;

	private final MasterAddress master;

	/**
	 * Follows a Sentinel voter's master; {@code null} for a master at a fixed address.
	 */
	private final @Nullable SentinelWatch sentinelWatch;

	private final String clientName;

	private final TlsSettings tls;

	private final GreetingListener greeting;

	private final long reconnectBackoffNanos;

	private final ThreadPoolExecutor thread;

	private final NodeCommands commands;

	private volatile long downUntilNanos = System.nanoTime();

	/** The generation of the voter's master the last connection attempt went to. */
	private volatile int attemptGeneration = -1;

	private volatile @Nullable RuntimeException lastFailure;

	/**
	 * @param sentinelTimeoutMillis the bound for each answer of a Sentinel voter's
	 * sentinels, and for each check of a master they name
	 */
	NodeConnector(RedisNodeUri uri, String clientName, TlsSettings tls, GreetingListener greeting,
			long reconnectBackoffNanos, int sentinelTimeoutMillis) {
		this.uri = uri;
		this.master = new MasterAddress(uri, clientName, tls);
		this.sentinelWatch = this.master.followsFailovers()
				? new SentinelWatch(uri, this.master, sentinelTimeoutMillis, reconnectBackoffNanos) : null;
		this.clientName = clientName;
		this.tls = tls;
		this.greeting = greeting;
		this.reconnectBackoffNanos = reconnectBackoffNanos;
		this.commands = new NodeCommands(uri.redacted());
		this.thread = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), (task) -> {
			Thread connector = new Thread(task, "redlock-connect-" + uri.name());
			connector.setDaemon(true);
			return connector;
		});
		this.thread.allowCoreThreadTimeOut(true);
	}

	/**
	 * Runs a task on the connector thread, after those queued before it.
	 * @throws RejectedExecutionException once {@link #shutdown() shut down}
	 */
	void execute(Runnable task) {
		this.thread.execute(task);
	}

	/**
	 * Opens a connection and greets the node; a greeting that fails closes it.
	 * @param timeoutMillis the bound for connecting and for each read
	 * @param latency told how long the greeting's reply took
	 */
	PipelinedConnection connectAndGreet(int timeoutMillis, LongConsumer latency) {
		PipelinedConnection connection = connect(timeoutMillis);
		try {
			NodeGreeting.exchange(connection, latency, this.greeting, this.commands);
		}
		catch (RuntimeException ex) {
			connection.closeQuietly();
			throw ex;
		}
		return connection;
	}

	/**
	 * Opens a connection, authenticated but not greeted.
	 * @param timeoutMillis the bound for connecting and for each read
	 * @throws AuthenticationFailedException if the node refused our credentials
	 */
	PipelinedConnection connect(int timeoutMillis) {
		MasterAddress.Current master = this.master.address(timeoutMillis);
		this.attemptGeneration = master.generation();
		PipelinedConnection connection;
		try {
			connection = new PipelinedConnection(master.address(),
					this.uri.clientConfig(timeoutMillis, this.clientName, this.tls));
		}
		catch (JedisDataException ex) {
			// AUTH, HELLO, SELECT or CLIENT SETNAME refused: a wrong password or user,
			// not a node that is down
			throw new AuthenticationFailedException("authentication failed: " + ex.getMessage(), ex);
		}
		connection.masterGeneration = master.generation();
		try {
			this.master.verifyMaster(connection, master.generation());
		}
		catch (RuntimeException ex) {
			connection.closeQuietly();
			throw ex;
		}
		return connection;
	}

	/**
	 * Where the voter's master is: fixed, or followed through a Sentinel group's
	 * failovers.
	 */
	MasterAddress master() {
		return this.master;
	}

	/**
	 * Whether a connection was opened to the voter's master as it is now, not to one it
	 * has moved away from.
	 */
	boolean isCurrent(PipelinedConnection connection) {
		return !this.master.followsFailovers() || connection.masterGeneration == this.master.generation();
	}

	/** Tries the node again at once: its master moved, the back-off was the old one's. */
	void clearBackoff() {
		this.downUntilNanos = System.nanoTime();
	}

	/** What the node runs a lock's compare-and-delete with, as its greetings found. */
	NodeCommands commands() {
		return this.commands;
	}

	/**
	 * Leaves the node alone for the back-off after a failed connection attempt; not when
	 * the voter's master moved since the last attempt began (the failure was the former
	 * master's).
	 */
	void failed(RuntimeException ex) {
		if (this.master.followsFailovers() && this.attemptGeneration != this.master.generation()) {
			return;
		}
		this.lastFailure = ex;
		this.downUntilNanos = System.nanoTime() + this.reconnectBackoffNanos;
	}

	/**
	 * Whether the node is left alone now, a failed connection attempt's back-off lasting.
	 */
	boolean isDown() {
		return this.downUntilNanos - System.nanoTime() > 0;
	}

	/**
	 * Why the node is not tried now: the last failure, while its back-off lasts.
	 * @return the failure to report, or {@code null} when the node may be tried
	 */
	@Nullable JedisConnectionException downFailure() {
		long left = this.downUntilNanos - System.nanoTime();
		if (left <= 0) {
			return null;
		}
		RuntimeException last = this.lastFailure;
		String message = "not retried for another " + TimeUnit.NANOSECONDS.toMillis(left)
				+ " ms after a failed connection attempt: "
				+ ((last != null && last.getMessage() != null) ? last.getMessage() : String.valueOf(last));
		// the cause tells a node that timed out (frozen) from one that refused the
		// connection
		return (last instanceof AuthenticationFailedException) ? new AuthenticationFailedException(message, last)
				: new NodeLeftOutException(message, last);
	}

	/**
	 * Starts following a Sentinel voter's master through failovers; nothing otherwise.
	 */
	void startFollowing() {
		if (this.sentinelWatch != null) {
			this.sentinelWatch.start();
		}
	}

	/**
	 * Stops following the master, and stops the thread once the tasks queued have run.
	 */
	void shutdown() {
		this.master.close();
		if (this.sentinelWatch != null) {
			this.sentinelWatch.close();
		}
		this.thread.shutdown();
	}

}
