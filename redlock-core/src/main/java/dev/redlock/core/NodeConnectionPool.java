package dev.redlock.core;

import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.exceptions.JedisConnectionException;

/**
 * Connections to one node. Borrowing never waits longer than the time the caller has left, and a new connection is
 * opened with that time as its connect and socket timeout, so a round trip stays within its bound even when a
 * connection has to be made. Broken connections are closed, not reused.
 */
final class NodeConnectionPool implements AutoCloseable {

	private final RedisNodeUri uri;

	private final HostAndPort hostAndPort;

	private final String clientName;

	private final int maxIdle;

	private final Semaphore permits;

	private final ConcurrentLinkedDeque<PipelinedConnection> idle = new ConcurrentLinkedDeque<>();

	private final AtomicInteger idleCount = new AtomicInteger();

	private volatile boolean closed;

	NodeConnectionPool(RedisNodeUri uri, int maxTotal, int maxIdle, String clientName) {
		this.uri = uri;
		this.hostAndPort = new HostAndPort(uri.host(), uri.port());
		this.clientName = clientName;
		this.maxIdle = maxIdle;
		this.permits = new Semaphore(maxTotal);
	}

	/**
	 * Borrows a connection, opening one if none is idle.
	 * @param timeoutMillis the time the caller has left, at least 1
	 * @return a connected connection, to be given back with {@link #giveBack}
	 * @throws JedisConnectionException if no connection could be had in time
	 * @throws redis.clients.jedis.exceptions.JedisDataException if the node refused the handshake (e.g. AUTH)
	 */
	PipelinedConnection borrow(int timeoutMillis) {
		if (this.closed) {
			throw new JedisConnectionException("Redlock has been closed");
		}
		if (!acquirePermit(timeoutMillis)) {
			throw new JedisConnectionException("all connections to the node are in use");
		}
		try {
			PipelinedConnection connection;
			while ((connection = this.idle.pollFirst()) != null) {
				this.idleCount.decrementAndGet();
				if (!connection.isBroken() && connection.isConnected()) {
					return connection;
				}
				closeQuietly(connection);
			}
			return open(timeoutMillis);
		}
		catch (RuntimeException | Error ex) {
			this.permits.release();
			throw ex;
		}
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
	 * Returns a borrowed connection; broken ones and those beyond the idle limit are closed.
	 * @param connection the connection from {@link #borrow}
	 */
	void giveBack(PipelinedConnection connection) {
		try {
			if (this.closed || connection.isBroken() || this.idleCount.get() >= this.maxIdle) {
				closeQuietly(connection);
			}
			else {
				this.idleCount.incrementAndGet();
				this.idle.offerFirst(connection);
				if (this.closed && this.idle.remove(connection)) {
					closeQuietly(connection);
				}
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
		return new PipelinedConnection(this.hostAndPort, config.build());
	}

	@Override
	public void close() {
		this.closed = true;
		PipelinedConnection connection;
		while ((connection = this.idle.pollFirst()) != null) {
			this.idleCount.decrementAndGet();
			closeQuietly(connection);
		}
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
