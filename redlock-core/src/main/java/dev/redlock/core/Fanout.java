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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Sends one command to many nodes at once: it is written and flushed to every node's connection before any reply
 * is read, so a round costs about one round trip to the slowest node, not the sum. The whole round, waiting for
 * connections included, shares one deadline: no node can hold it up past the node timeout. Replies are read in the
 * order they arrive, and a round with an {@link EarlyExit} stops waiting as soon as the replies read settle it, so a
 * slow node delays nobody once the others have decided.
 */
final class Fanout {

	private final List<NodeConnectionPool> pools;

	private static final Logger logger = LoggerFactory.getLogger(Fanout.class);

	/**
	 * How much later than the others a node may have answered last time and still be waited for once a round is
	 * settled (at least; as long again as the round took to settle, if longer): more than a busy machine's
	 * scheduling delay, less than a frozen process, a failover or a congested link.
	 */
	private static final long LAG_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

	private final long timeoutNanos;

	private final OnDemandThread lateReplies;

	Fanout(List<NodeConnectionPool> pools, long timeoutNanos, OnDemandThread lateReplies) {
		this.pools = pools;
		this.timeoutNanos = timeoutNanos;
		this.lateReplies = lateReplies;
	}

	/**
	 * Runs the command on the selected nodes. Never throws for a node's failure: each shows in its reply.
	 * @param command the command, the same for every node
	 * @param selected which nodes to send to, by index; {@code null} for all
	 * @return one reply per node, {@code null} for nodes not selected
	 */
	NodeReply[] execute(CommandArguments command, boolean @Nullable [] selected) {
		return execute(command, selected, null);
	}

	/**
	 * Runs the command on the selected nodes, reading replies in the order they arrive, and stops waiting once the
	 * early exit says the replies read so far settle the round.
	 *
	 * <p>The caller's interrupt flag is cleared for the round and set again after it: on a virtual thread, a blocking
	 * socket read with the flag set closes the socket, and a release must still reach the nodes when its caller was
	 * interrupted. An interrupt that arrives during a read shows as {@link NodeReply.Kind#INTERRUPTED} for that node
	 * only; the other nodes are still read.
	 * @param command the command, the same for every node
	 * @param selected which nodes to send to, by index; {@code null} for all
	 * @param exit when to stop waiting, and what to send to the nodes not waited for; {@code null} to wait for all
	 * @return one reply per node, {@code null} for nodes not selected, {@link NodeReply.Kind#NOT_AWAITED} for nodes
	 * whose reply was not waited for
	 */
	NodeReply[] execute(CommandArguments command, boolean @Nullable [] selected, @Nullable EarlyExit exit) {
		return new Round(command, selected, exit).run();
	}

	/** One command sent to many nodes: the state of a single {@link #execute} call, on the caller's thread. */
	private final class Round {

		private final CommandArguments command;

		private final boolean @Nullable [] selected;

		private final @Nullable EarlyExit exit;

		private final long start = System.nanoTime();

		private final long deadline = this.start + Fanout.this.timeoutNanos;

		private final PipelinedConnection[] connections;

		private final NodeReply[] replies;

		/** Whether the caller was interrupted before or during the round: its flag is set again at the end. */
		private boolean interrupted;

		Round(CommandArguments command, boolean @Nullable [] selected, @Nullable EarlyExit exit) {
			this.command = command;
			this.selected = selected;
			this.exit = exit;
			int n = Fanout.this.pools.size();
			this.connections = new PipelinedConnection[n];
			this.replies = new NodeReply[n];
		}

		NodeReply[] run() {
			deferInterrupt();
			try {
				sendToAll();
				readReplies();
			}
			finally {
				for (int i = 0; i < this.connections.length; i++) {
					if (this.connections[i] != null) {
						// a connection whose reply was not read is closed by its pool, never reused
						Fanout.this.pools.get(i).giveBack(this.connections[i]);
					}
				}
				if (this.interrupted || Thread.interrupted()) {
					Thread.currentThread().interrupt();
				}
			}
			return this.replies;
		}

		/** Clears the caller's interrupt flag before blocking I/O, remembering it for the end of the round. */
		private void deferInterrupt() {
			if (Thread.interrupted()) {
				this.interrupted = true;
			}
		}

		private void sendToAll() {
			int n = this.connections.length;
			// nodes with an idle connection get the command at once; the others while their connection is opened
			CompletableFuture<PipelinedConnection>[] pending = null;
			for (int i = 0; i < n; i++) {
				if (this.selected == null || this.selected[i]) {
					NodeConnectionPool pool = Fanout.this.pools.get(i);
					PipelinedConnection idle = pool.borrowIdle();
					if (idle != null) {
						send(i, idle);
						continue;
					}
					CompletableFuture<PipelinedConnection> borrowed = pool.borrow(millisLeft(this.deadline));
					deferInterrupt();
					if (borrowed.isDone()) {
						send(i, borrowed);
					}
					else if (pool.lastReplyNanos() >= Fanout.this.timeoutNanos / 2) {
						// it let the last round wait (frozen, or far away): connect it for a later round, not this one
						keepWhenReady(pool, borrowed);
						this.replies[i] = NodeReply.failed(i, new JedisConnectionException("not waited for: connecting "
								+ "in the background, since the node was slow to answer last time",
								new SocketTimeoutException()), System.nanoTime() - this.start);
					}
					else {
						if (pending == null) {
							pending = newPendingArray(n);
						}
						pending[i] = borrowed;
					}
				}
			}
			if (pending != null) {
				sendAsConnected(pending);
			}
		}

		/**
		 * Reads every sent node's reply, those that have arrived first, until all are read or the early exit settles
		 * the round; a node that has not answered by the deadline times out.
		 */
		private void readReplies() {
			int unread = 0;
			for (PipelinedConnection connection : this.connections) {
				if (connection != null) {
					unread++;
				}
			}
			while (unread > 0) {
				read(nextToRead());
				unread--;
				if (unread > 0 && this.exit != null && this.exit.settled(this.replies)) {
					if (readExpected(unread) > 0) {
						handOver();
					}
					return;
				}
			}
		}

		/**
		 * Once a round is settled, reads the replies that have arrived and those of nodes expected to answer soon: a
		 * node whose last reply came within about twice the time this round took to settle. Only a node known to be
		 * lagging (last time it answered much later, or not at all) is not waited for, so a healthy cluster, even a
		 * busy one whose replies straggle by a few milliseconds, is read in full, with no other thread involved.
		 * @return how many are still unread
		 */
		private int readExpected(int unread) {
			long settledAfter = System.nanoTime() - this.start;
			long patience = settledAfter + Math.max(LAG_SLACK_NANOS, settledAfter);
			while (unread > 0) {
				int next = -1;
				for (int i = 0; i < this.connections.length; i++) {
					if (this.connections[i] != null && this.replies[i] == null) {
						if (this.connections[i].replyArrived()) {
							next = i;
							break;
						}
						if (next < 0 && Fanout.this.pools.get(i).lastReplyNanos() <= patience) {
							next = i;
						}
					}
				}
				if (next < 0) {
					return unread;
				}
				read(next);
				unread--;
			}
			return 0;
		}

		private void read(int node) {
			PipelinedConnection connection = this.connections[node];
			deferInterrupt();
			try {
				connection.setSoTimeout(millisLeft(this.deadline));
				Object value = connection.readReply();
				this.replies[node] = NodeReply.replied(node, value, System.nanoTime() - this.start);
			}
			catch (JedisException ex) {
				this.replies[node] = failed(node, ex);
			}
			if (this.replies[node].kind() != NodeReply.Kind.INTERRUPTED) {
				Fanout.this.pools.get(node).replied(this.replies[node].nanos());
			}
		}

		/** The first unread node whose reply has arrived, else the first unread node. */
		private int nextToRead() {
			int first = -1;
			for (int i = 0; i < this.connections.length; i++) {
				if (this.connections[i] != null && this.replies[i] == null) {
					if (this.connections[i].replyArrived()) {
						return i;
					}
					if (first < 0) {
						first = i;
					}
				}
			}
			return first;
		}

		/**
		 * Stops waiting for the unread replies: after the early exit's follow-up command, if any, is sent, those
		 * connections go to the late-reply thread, which reads what is still to come (within the same deadline) and
		 * only then returns them to their pools.
		 */
		private void handOver() {
			CommandArguments followUp = this.exit.toNotAwaited(this.replies);
			for (int i = 0; i < this.connections.length; i++) {
				PipelinedConnection connection = this.connections[i];
				if (connection == null || this.replies[i] != null) {
					continue;
				}
				if (followUp != null) {
					try {
						connection.send(followUp);
						connection.flushNow();
					}
					catch (JedisException ex) {
						connection.setBroken();
					}
				}
				this.replies[i] = NodeReply.notAwaited(i, System.nanoTime() - this.start);
				this.connections[i] = null;
				int node = i;
				EarlyExit exit = this.exit;
				long start = this.start;
				long deadline = this.deadline;
				Fanout.this.lateReplies.execute(() -> readLate(node, connection, start, deadline, exit),
						// closing: the connection owes its replies, so its pool closes it
						() -> Fanout.this.pools.get(node).giveBack(connection));
			}
		}

		/**
		 * Sends to each node whose connection is being opened as soon as it is ready, in the order they become
		 * ready, so that a node that connects slowly does not delay the others; nodes not connected by the deadline
		 * time out.
		 */
		private void sendAsConnected(CompletableFuture<PipelinedConnection>[] pending) {
			int waiting = 0;
			for (CompletableFuture<PipelinedConnection> future : pending) {
				if (future != null) {
					waiting++;
				}
			}
			while (waiting > 0) {
				for (int i = 0; i < pending.length; i++) {
					if (pending[i] != null && pending[i].isDone()) {
						send(i, pending[i]);
						pending[i] = null;
						waiting--;
					}
				}
				if (waiting == 0) {
					return;
				}
				if (this.deadline - System.nanoTime() <= 0) {
					break;
				}
				awaitAny(pending, this.deadline);
				deferInterrupt();
			}
			for (int i = 0; i < pending.length; i++) {
				if (pending[i] != null) {
					// not connected in time: times out, and the connection is kept for a later round
					send(i, pending[i]);
				}
			}
		}

		private void send(int node, CompletableFuture<PipelinedConnection> borrowed) {
			NodeConnectionPool pool = Fanout.this.pools.get(node);
			PipelinedConnection connection;
			try {
				connection = awaitConnection(borrowed, this.deadline);
			}
			catch (TimeoutException ex) {
				keepWhenReady(pool, borrowed);
				this.replies[node] = NodeReply.failed(node,
						new JedisConnectionException("connecting took longer than the node timeout",
								new SocketTimeoutException()),
						System.nanoTime() - this.start);
				return;
			}
			catch (JedisException ex) {
				this.replies[node] = NodeReply.failed(node, ex, System.nanoTime() - this.start);
				return;
			}
			finally {
				deferInterrupt();
			}
			send(node, connection);
		}

		/** Writes and flushes the command to a borrowed connection; a failure shows in the node's reply. */
		private void send(int node, PipelinedConnection connection) {
			try {
				connection.send(this.command);
				connection.flushNow();
				this.connections[node] = connection;
			}
			catch (RuntimeException ex) {
				connection.setBroken();
				Fanout.this.pools.get(node).giveBack(connection);
				if (!(ex instanceof JedisException)) {
					throw ex;
				}
				this.replies[node] = failed(node, (JedisException) ex);
			}
		}

		/**
		 * Records a failure. When the caller was interrupted meanwhile, the failure is the interrupt's (on a virtual
		 * thread it closes the socket), not the node's. When the connection was lost (not merely slow), the node's
		 * other idle connections are most likely dead too (the node restarted, or the network reset them), so they
		 * are dropped rather than tried one per round.
		 */
		private NodeReply failed(int node, JedisException ex) {
			long nanos = System.nanoTime() - this.start;
			if (Thread.interrupted()) {
				this.interrupted = true;
				return NodeReply.interrupted(node, ex, nanos);
			}
			NodeReply reply = NodeReply.failed(node, ex, nanos);
			if (reply.kind() == NodeReply.Kind.UNREACHABLE) {
				Fanout.this.pools.get(node).discardIdle();
			}
			return reply;
		}

	}

	/**
	 * Reads, on the late-reply thread, the reply a round did not wait for, and the follow-up's; tells the early exit,
	 * then returns the connection (closed if a reply was not read in time).
	 */
	private void readLate(int node, PipelinedConnection connection, long start, long deadline, EarlyExit exit) {
		try {
			NodeReply reply;
			try {
				connection.setSoTimeout(millisLeft(deadline));
				reply = NodeReply.replied(node, connection.readReply(), System.nanoTime() - start);
			}
			catch (JedisException ex) {
				reply = NodeReply.failed(node, ex, System.nanoTime() - start);
			}
			this.pools.get(node).replied(reply.nanos());
			if (!connection.isReusable() && !connection.isBroken()) {
				try {
					connection.setSoTimeout(millisLeft(System.nanoTime() + this.timeoutNanos));
					connection.readReply();
				}
				catch (JedisException ex) {
					// the key expires with its TTL where the follow-up did not land
					logger.debug("Follow-up on node {} not confirmed: {}", node, ex.getMessage());
				}
			}
			exit.lateReply(reply);
		}
		finally {
			// a connection that still owes a reply is closed here, never reused
			this.pools.get(node).giveBack(connection);
		}
	}

	@SuppressWarnings("unchecked")
	private static CompletableFuture<PipelinedConnection>[] newPendingArray(int n) {
		return new CompletableFuture[n];
	}

	/**
	 * Decides when a round may stop waiting for the nodes that have not answered yet.
	 */
	interface EarlyExit {

		/**
		 * Whether the replies read so far settle the round.
		 * @param replies the replies read so far, {@code null} for nodes not read (yet) or not asked
		 * @return {@code true} to stop waiting for the others
		 */
		boolean settled(NodeReply[] replies);

		/**
		 * What to send, without waiting for its reply, to the nodes whose reply is not awaited.
		 * @param replies the replies that settled the round
		 * @return the command, or {@code null} for none
		 */
		@Nullable CommandArguments toNotAwaited(NodeReply[] replies);

		/**
		 * Told, on the late-reply thread, how a node not awaited answered in the end.
		 * @param reply its reply, or its timeout or failure
		 */
		void lateReply(NodeReply reply);

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

	/** Keeps a connection that is still being opened for a later round, once it is ready. */
	private static void keepWhenReady(NodeConnectionPool pool, CompletableFuture<PipelinedConnection> borrowed) {
		borrowed.whenComplete((late, failure) -> {
			if (late != null) {
				pool.giveBack(late);
			}
		});
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
