package dev.redlock.core.internal.round;

import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.transport.NodeConnectionPool;
import dev.redlock.core.internal.transport.PipelinedConnection;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * The connections a round is still waiting for (being opened, or waiting for a free
 * slot), by node. A round that stops waiting for one keeps it for a later round: nothing
 * was written to it.
 */
final class PendingBorrows {

	/**
	 * None awaited: what a round starts with, until a connection is not ready at once.
	 * Shared by every round, so never changed.
	 */
	static final PendingBorrows NONE = new PendingBorrows(List.of());

	private final List<NodeConnectionPool> pools;

	/** {@code null} until the first borrow that is not ready at once. */
	private @Nullable CompletableFuture<PipelinedConnection> @Nullable [] pending;

	private int count;

	PendingBorrows(List<NodeConnectionPool> pools) {
		this.pools = pools;
	}

	/** How many connections are still awaited. */
	int count() {
		return this.count;
	}

	boolean isPending(int node) {
		return this.pending != null && this.pending[node] != null;
	}

	/** Adds a connection being borrowed; never to {@link #NONE}. */
	@SuppressWarnings("unchecked")
	void add(int node, CompletableFuture<PipelinedConnection> borrowed) {
		if (this == NONE) {
			throw new IllegalStateException("NONE is shared: a round waits for its connections in its own instance");
		}
		if (this.pending == null) {
			this.pending = new CompletableFuture[this.pools.size()];
		}
		this.pending[node] = borrowed;
		this.count++;
	}

	/**
	 * Takes a connection that has come (ready, or failed), or returns {@code null}.
	 * @param node the node
	 */
	@Nullable CompletableFuture<PipelinedConnection> takeIfDone(int node) {
		CompletableFuture<PipelinedConnection> borrowed = (this.pending != null) ? this.pending[node] : null;
		if (borrowed == null || !borrowed.isDone()) {
			return null;
		}
		this.pending[node] = null;
		this.count--;
		return borrowed;
	}

	/**
	 * Stops waiting for the node's connection, keeping it for a later round.
	 * @return whether one was awaited
	 */
	boolean keepForLater(int node) {
		if (!isPending(node)) {
			return false;
		}
		keepWhenReady(this.pools.get(node), this.pending[node]);
		this.pending[node] = null;
		this.count--;
		return true;
	}

	/**
	 * Whether a connection is awaited for a node that answers within the given time: one
	 * worth waiting for (a slow node's connections are busy with its late replies, and it
	 * would not answer in time).
	 */
	boolean awaitsFastNode(long withinNanos) {
		for (int i = 0; i < this.pools.size(); i++) {
			if (isPending(i) && this.pools.get(i).latency().expectedNanos() <= withinNanos) {
				return true;
			}
		}
		return false;
	}

	/**
	 * The connection a finished borrow gave.
	 * @throws JedisException why it could not be had
	 */
	static PipelinedConnection connectionOf(CompletableFuture<PipelinedConnection> borrowed) {
		try {
			return borrowed.join();
		}
		catch (CompletionException | CancellationException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			throw (cause instanceof JedisException jedis) ? jedis : new JedisConnectionException(cause);
		}
	}

	/**
	 * Keeps a connection that is still being borrowed for a later round, once it is
	 * ready.
	 */
	static void keepWhenReady(NodeConnectionPool pool, CompletableFuture<PipelinedConnection> borrowed) {
		// cancelled, the borrow gives a connection that arrives later back to the pool
		// itself
		if (!borrowed.cancel(false) && !borrowed.isCompletedExceptionally()) {
			// it arrived meanwhile: nobody has written to it
			pool.giveBack(borrowed.join());
		}
	}

}
