package dev.redlock.core;

import java.net.SocketTimeoutException;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Sends one command to many nodes at once: it is written and flushed to every node's connection before any reply
 * is read, so a round costs about one round trip to the slowest node, not the sum. The whole round, waiting for
 * connections included, shares one deadline: no node can hold it up past the node timeout.
 */
final class Fanout {

	private final List<NodeConnectionPool> pools;

	private final long timeoutNanos;

	Fanout(List<NodeConnectionPool> pools, long timeoutNanos) {
		this.pools = pools;
		this.timeoutNanos = timeoutNanos;
	}

	/**
	 * Runs the command on the selected nodes. Never throws for a node's failure: each shows in its reply.
	 * @param command the command, the same for every node
	 * @param selected which nodes to send to, by index; {@code null} for all
	 * @return one reply per node, {@code null} for nodes not selected
	 */
	NodeReply[] execute(CommandArguments command, boolean @Nullable [] selected) {
		int n = this.pools.size();
		long start = System.nanoTime();
		long deadline = start + this.timeoutNanos;
		PipelinedConnection[] connections = new PipelinedConnection[n];
		NodeReply[] replies = new NodeReply[n];
		try {
			// nodes with an idle connection get the command at once; the others while their connection is opened
			@SuppressWarnings("unchecked")
			CompletableFuture<PipelinedConnection>[] pending = new CompletableFuture[n];
			for (int i = 0; i < n; i++) {
				if (selected == null || selected[i]) {
					CompletableFuture<PipelinedConnection> borrowed = this.pools.get(i).borrow(millisLeft(deadline));
					if (borrowed.isDone()) {
						send(i, command, borrowed, start, deadline, connections, replies);
					}
					else {
						pending[i] = borrowed;
					}
				}
			}
			sendAsConnected(command, pending, start, deadline, connections, replies);
			for (int i = 0; i < n; i++) {
				PipelinedConnection connection = connections[i];
				if (connection == null) {
					continue;
				}
				try {
					connection.setSoTimeout(millisLeft(deadline));
					Object value = connection.getUnflushedObject();
					replies[i] = NodeReply.replied(i, value, System.nanoTime() - start);
				}
				catch (JedisException ex) {
					replies[i] = failed(i, ex, start);
				}
			}
		}
		finally {
			for (int i = 0; i < n; i++) {
				if (connections[i] != null) {
					if (replies[i] == null) {
						// its reply was never read: the next user would read it instead of their own
						connections[i].setBroken();
					}
					this.pools.get(i).giveBack(connections[i]);
				}
			}
		}
		return replies;
	}

	/**
	 * Sends to each node whose connection is being opened as soon as it is ready, in the order they become ready, so
	 * that a node that connects slowly does not delay the others; nodes not connected by the deadline time out.
	 */
	private void sendAsConnected(CommandArguments command, CompletableFuture<PipelinedConnection>[] pending,
			long start, long deadline, PipelinedConnection[] connections, NodeReply[] replies) {
		int waiting = 0;
		for (CompletableFuture<PipelinedConnection> future : pending) {
			if (future != null) {
				waiting++;
			}
		}
		while (waiting > 0) {
			for (int i = 0; i < pending.length; i++) {
				if (pending[i] != null && pending[i].isDone()) {
					send(i, command, pending[i], start, deadline, connections, replies);
					pending[i] = null;
					waiting--;
				}
			}
			if (waiting == 0) {
				return;
			}
			if (deadline - System.nanoTime() <= 0) {
				break;
			}
			awaitAny(pending, deadline);
		}
		for (int i = 0; i < pending.length; i++) {
			if (pending[i] != null) {
				// not connected in time: times out, and the connection is kept for a later round
				send(i, command, pending[i], start, deadline, connections, replies);
			}
		}
	}

	/** Waits until one of the futures completes or the deadline passes; keeps the interrupt flag. */
	private static void awaitAny(CompletableFuture<PipelinedConnection>[] pending, long deadline) {
		CompletableFuture<?>[] open = Arrays.stream(pending)
			.filter((future) -> future != null)
			.toArray(CompletableFuture<?>[]::new);
		boolean interrupted = Thread.interrupted();
		try {
			CompletableFuture.anyOf(open).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			interrupted = true;
		}
		catch (ExecutionException | TimeoutException ex) {
			// one failed (handled by send) or none in time (handled by the caller)
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private void send(int node, CommandArguments command, CompletableFuture<PipelinedConnection> borrowed, long start,
			long deadline, PipelinedConnection[] connections, NodeReply[] replies) {
		NodeConnectionPool pool = this.pools.get(node);
		PipelinedConnection connection;
		try {
			connection = awaitConnection(borrowed, deadline);
		}
		catch (TimeoutException ex) {
			// keep the connection for a later round when it arrives
			borrowed.whenComplete((late, failure) -> {
				if (late != null) {
					pool.giveBack(late);
				}
			});
			replies[node] = NodeReply.failed(node,
					new JedisConnectionException("connecting took longer than the node timeout",
							new SocketTimeoutException()),
					System.nanoTime() - start);
			return;
		}
		catch (JedisException ex) {
			replies[node] = NodeReply.failed(node, ex, System.nanoTime() - start);
			return;
		}
		try {
			connection.sendCommand(command);
			connection.flushNow();
			connections[node] = connection;
		}
		catch (RuntimeException ex) {
			connection.setBroken();
			pool.giveBack(connection);
			if (!(ex instanceof JedisException)) {
				throw ex;
			}
			replies[node] = failed(node, (JedisException) ex, start);
		}
	}

	/**
	 * Records a failure; when the connection was lost (not merely slow), the node's other idle connections are most
	 * likely dead too (the node restarted, or the network reset them), so they are dropped rather than tried one per
	 * round.
	 */
	private NodeReply failed(int node, JedisException ex, long start) {
		NodeReply reply = NodeReply.failed(node, ex, System.nanoTime() - start);
		if (reply.kind() == NodeReply.Kind.UNREACHABLE) {
			this.pools.get(node).discardIdle();
		}
		return reply;
	}

	/**
	 * Waits for a connection until the deadline, without giving up on an interrupt (a release must still reach the
	 * nodes); the interrupt flag is kept.
	 */
	private static PipelinedConnection awaitConnection(CompletableFuture<PipelinedConnection> borrowed, long deadline)
			throws TimeoutException {
		boolean interrupted = false;
		try {
			while (true) {
				try {
					return borrowed.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
				}
				catch (InterruptedException ex) {
					interrupted = true;
				}
				catch (ExecutionException | CompletionException ex) {
					Throwable cause = ex.getCause();
					if (cause instanceof JedisException jedis) {
						throw jedis;
					}
					throw new JedisConnectionException(cause);
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private static int millisLeft(long deadline) {
		long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
		// a socket timeout of 0 means "forever": never hand it out
		return (int) Math.max(1, Math.min(Integer.MAX_VALUE, left));
	}

}
