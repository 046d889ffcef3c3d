package dev.redlock.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLParameters;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Connections to one node.
 *
 * <p>An idle connection is handed out at once. A new one is opened on this node's own connector thread, so that a
 * node that is slow to connect (frozen, or behind a dropped route) cannot eat the time of a round that other nodes
 * need: the round waits for the connection only as long as its deadline allows, and a connection that arrives later
 * is kept for the next round. Each new connection first asks the server for its {@code run_id} and uptime
 * ({@code INFO server}), for the {@link NodeQuarantine restart quarantine}. After a failed connection attempt the
 * node is not tried again for {@link #reconnectBackoffNanos}, so a dead node costs nothing and queues nothing.
 * Broken connections are closed, not reused. The connector thread exists only while connections are being opened.
 */
final class NodeConnectionPool implements AutoCloseable {

	private final RedisNodeUri uri;

	private final HostAndPort hostAndPort;

	private final String clientName;

	private final int maxIdle;

	private final long reconnectBackoffNanos;

	private final NodeQuarantine quarantine;

	private final Semaphore permits;

	/** Idle connections, the most recently used first (its socket is the likeliest to be alive); guarded by itself. */
	private final ArrayDeque<PipelinedConnection> idle = new ArrayDeque<>();

	private final ThreadPoolExecutor connector;

	private volatile long downUntilNanos;

	/** How long the node took to answer (or to fail) in the last round that read its reply. */
	private volatile long lastReplyNanos;

	private volatile @Nullable RuntimeException lastConnectFailure;

	private volatile boolean closed;

	private final TlsSettings tls;

	NodeConnectionPool(RedisNodeUri uri, int maxTotal, int maxIdle, String clientName, long reconnectBackoffNanos,
			NodeQuarantine quarantine, TlsSettings tls) {
		this.uri = uri;
		this.tls = tls;
		this.quarantine = quarantine;
		this.hostAndPort = new HostAndPort(uri.host(), uri.port());
		this.clientName = clientName;
		this.maxIdle = maxIdle;
		this.reconnectBackoffNanos = reconnectBackoffNanos;
		this.permits = new Semaphore(maxTotal);
		this.downUntilNanos = System.nanoTime();
		this.connector = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), (task) -> {
			Thread thread = new Thread(task, "redlock-connect-" + uri.hostAndPort());
			thread.setDaemon(true);
			return thread;
		});
		this.connector.allowCoreThreadTimeOut(true);
	}

	/**
	 * Borrows a connection: an idle one at once, else one being opened in the background.
	 * @param timeoutMillis the time the caller has left, at least 1: the bound for waiting on a free slot and for
	 * connecting
	 * @return the connection, to be given back with {@link #giveBack}; failed with a {@link JedisConnectionException}
	 * if none can be had, or a {@link redis.clients.jedis.exceptions.JedisDataException} if the node refused the
	 * handshake (e.g. a wrong password)
	 */
	CompletableFuture<PipelinedConnection> borrow(int timeoutMillis) {
		if (this.closed) {
			return CompletableFuture.failedFuture(new JedisConnectionException("Redlock has been closed"));
		}
		JedisConnectionException down = downFailure();
		if (down != null) {
			return CompletableFuture.failedFuture(down);
		}
		if (!acquirePermit(timeoutMillis)) {
			return CompletableFuture
				.failedFuture(new JedisConnectionException("all connections to the node are in use"));
		}
		PipelinedConnection connection = pollIdle();
		return (connection != null) ? CompletableFuture.completedFuture(connection) : openInBackground(timeoutMillis);
	}

	/**
	 * Borrows an idle connection if there is one and a slot is free now, without waiting or allocating: the path of
	 * almost every round.
	 * @return the connection, to be given back with {@link #giveBack}, or {@code null} (then use {@link #borrow})
	 */
	@Nullable PipelinedConnection borrowIdle() {
		if (this.closed || !this.permits.tryAcquire()) {
			return null;
		}
		PipelinedConnection connection = pollIdle();
		if (connection == null) {
			this.permits.release();
		}
		return connection;
	}

	/** Takes the most recent usable idle connection, closing broken ones on the way; the caller holds a permit. */
	private @Nullable PipelinedConnection pollIdle() {
		while (true) {
			PipelinedConnection connection;
			synchronized (this.idle) {
				connection = this.idle.pollFirst();
			}
			if (connection == null || (connection.isReusable() && connection.isConnected())) {
				return connection;
			}
			closeQuietly(connection);
		}
	}

	private CompletableFuture<PipelinedConnection> openInBackground(int timeoutMillis) {
		CompletableFuture<PipelinedConnection> result = new CompletableFuture<>();
		try {
			this.connector.execute(() -> {
				JedisConnectionException down = this.closed ? new JedisConnectionException("Redlock has been closed")
						: downFailure();
				if (down != null) {
					this.permits.release();
					result.completeExceptionally(down);
					return;
				}
				try {
					result.complete(open(timeoutMillis));
				}
				catch (RuntimeException ex) {
					this.lastConnectFailure = ex;
					this.downUntilNanos = System.nanoTime() + this.reconnectBackoffNanos;
					this.permits.release();
					result.completeExceptionally(ex);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			this.permits.release();
			result.completeExceptionally(new JedisConnectionException("Redlock has been closed", ex));
		}
		return result;
	}

	private @Nullable JedisConnectionException downFailure() {
		long left = this.downUntilNanos - System.nanoTime();
		if (left <= 0) {
			return null;
		}
		RuntimeException last = this.lastConnectFailure;
		String message = "not retried for another " + TimeUnit.NANOSECONDS.toMillis(left)
				+ " ms after a failed connection attempt: "
				+ ((last != null && last.getMessage() != null) ? last.getMessage() : String.valueOf(last));
		return (last instanceof AuthenticationFailedException) ? new AuthenticationFailedException(message, last)
				: new JedisConnectionException(message);
	}

	/**
	 * Waits for a permit without giving up on an interrupt: a release must still reach the nodes when the thread
	 * was interrupted, and the wait is bounded anyway. The interrupt flag is kept.
	 */
	private boolean acquirePermit(int timeoutMillis) {
		if (this.permits.tryAcquire()) {
			return true;
		}
		boolean interrupted = Thread.interrupted();
		try {
			return this.permits.tryAcquire(timeoutMillis, TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			interrupted = true;
			return false;
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * Notes how long the node took to answer in a round, timeouts included.
	 * @param nanos from the start of the round
	 */
	void replied(long nanos) {
		this.lastReplyNanos = nanos;
	}

	/**
	 * Returns how long the node took to answer in the last round that read its reply.
	 * @return nanoseconds from the start of that round; 0 before any
	 */
	long lastReplyNanos() {
		return this.lastReplyNanos;
	}

	/**
	 * Returns a borrowed connection; broken ones, those that still owe a reply (the next user would read it as its
	 * own) and those beyond the idle limit are closed.
	 * @param connection the connection from {@link #borrow}
	 */
	void giveBack(PipelinedConnection connection) {
		try {
			boolean kept = false;
			if (!this.closed && connection.isReusable()) {
				synchronized (this.idle) {
					if (this.idle.size() < this.maxIdle) {
						this.idle.offerFirst(connection);
						kept = true;
					}
				}
			}
			if (!kept) {
				closeQuietly(connection);
			}
			else if (this.closed) {
				// closed meanwhile: close() may have emptied the idle list before this connection was added
				discardIdle();
			}
		}
		finally {
			this.permits.release();
		}
	}

	private PipelinedConnection open(int timeoutMillis) {
		DefaultJedisClientConfig.Builder config = DefaultJedisClientConfig.builder()
			.connectionTimeoutMillis(timeoutMillis)
			.socketTimeoutMillis(timeoutMillis)
			.database(this.uri.database())
			.ssl(this.uri.tls())
			.clientSetInfoConfig(ClientSetInfoConfig.DISABLED);
		if (this.uri.user() != null) {
			config.user(this.uri.user());
		}
		if (this.uri.password() != null) {
			config.password(this.uri.password());
		}
		if (!this.clientName.isEmpty()) {
			config.clientName(this.clientName);
		}
		if (this.uri.tls()) {
			config.sslSocketFactory(this.tls.socketFactory());
			if (this.tls.verifyHostname()) {
				SSLParameters parameters = new SSLParameters();
				parameters.setEndpointIdentificationAlgorithm("HTTPS");
				config.sslParameters(parameters);
			}
		}
		PipelinedConnection connection;
		try {
			connection = new PipelinedConnection(this.hostAndPort, config.build());
		}
		catch (JedisDataException ex) {
			// AUTH, HELLO, SELECT or CLIENT SETNAME refused: a wrong password or user, not a node that is down
			throw new AuthenticationFailedException("authentication failed: " + ex.getMessage(), ex);
		}
		try {
			readServerInfo(connection);
		}
		catch (RuntimeException ex) {
			closeQuietly(connection);
			throw ex;
		}
		return connection;
	}

	/**
	 * Asks a new connection's server for its {@code run_id} and uptime, for the restart quarantine: once per
	 * connection, not per lock. A server that refuses {@code INFO} (renamed command, ACL) is still used; one that
	 * wants a password we did not give ({@code NOAUTH}) is an authentication failure.
	 */
	private void readServerInfo(PipelinedConnection connection) {
		connection.send(new CommandArguments(Command.INFO).add("server"));
		connection.flushNow();
		Object reply;
		try {
			reply = connection.readReply();
		}
		catch (JedisDataException ex) {
			if (String.valueOf(ex.getMessage()).startsWith("NOAUTH")) {
				throw new AuthenticationFailedException("authentication failed: " + ex.getMessage(), ex);
			}
			this.quarantine.observe(Map.of());
			return;
		}
		this.quarantine.observe((reply instanceof byte[] info) ? InfoReply.parse(info) : Map.of());
	}

	/** How many idle connections are kept now. */
	int idleCount() {
		synchronized (this.idle) {
			return this.idle.size();
		}
	}

	/**
	 * Closes every idle connection.
	 */
	void discardIdle() {
		List<PipelinedConnection> discarded;
		synchronized (this.idle) {
			discarded = new ArrayList<>(this.idle);
			this.idle.clear();
		}
		discarded.forEach(NodeConnectionPool::closeQuietly);
	}

	@Override
	public void close() {
		this.closed = true;
		this.connector.shutdownNow();
		discardIdle();
	}

	private static void closeQuietly(PipelinedConnection connection) {
		try {
			connection.close();
		}
		catch (RuntimeException ex) {
			// closing a socket that is already broken has nothing more to tell
		}
	}

}
