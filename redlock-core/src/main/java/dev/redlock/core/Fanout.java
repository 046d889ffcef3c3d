package dev.redlock.core;

import java.net.SocketTimeoutException;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Sends one command to many nodes at once: it is written and flushed to every node's connection before any reply
 * is read, so a round costs about one round trip, not the sum. The whole round, waiting for connections included,
 * shares one deadline, and no node's connection or pool can eat another node's share of it: connections that are
 * not ready are waited for while the other nodes are read. Replies are read in the order they arrive; when none has
 * arrived, the round waits for the node expected to answer first (by its measured latency), never for a node known
 * to be slow while a faster one is still out. A round with an {@link EarlyExit} stops waiting as soon as the replies
 * read settle it, so a slow or frozen minority costs the caller nothing: what is left is read by each node's
 * late-reply thread.
 */
final class Fanout {

	private static final Logger logger = LoggerFactory.getLogger(Fanout.class);

	/**
	 * How much later than expected a node may answer and still be waited for once a round is settled (at least; as
	 * long again as the round took to settle, if longer): more than a busy machine's scheduling delay, less than a
	 * frozen process, a failover or a congested link.
	 */
	private static final long LAG_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

	/** The longest a round parks between two looks at replies that are expected later and connections being opened. */
	private static final long MAX_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(500);

	private final List<NodeConnectionPool> pools;

	private final long timeoutNanos;

	/**
	 * Whether rounds wait for a connection to every node, even a slow one's: for work off the caller's path, such as
	 * a late clean-up, which must reach the node rather than be quick.
	 */
	private final boolean patient;

	Fanout(List<NodeConnectionPool> pools, long timeoutNanos) {
		this(pools, timeoutNanos, false);
	}

	Fanout(List<NodeConnectionPool> pools, long timeoutNanos, boolean patient) {
		this.pools = pools;
		this.timeoutNanos = timeoutNanos;
		this.patient = patient;
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
		 * Told, on the node's late-reply thread, how a node not awaited answered in the end. Whatever it throws is
		 * logged; the connection is closed unless every reply it owed was read.
		 * @param reply its reply, or its timeout or failure
		 * @param followUp the reply to the follow-up, or its failure; {@code null} when none was written
		 */
		void lateReply(NodeReply reply, @Nullable NodeReply followUp);

	}

	/** One command sent to many nodes: the state of a single {@link #execute} call, on the caller's thread. */
	private final class Round {

		private final CommandArguments command;

		private final boolean @Nullable [] selected;

		private final @Nullable EarlyExit exit;

		private final long start = System.nanoTime();

		private final long deadline = this.start + Fanout.this.timeoutNanos;

		/** Connections written to whose reply is still to be read; {@code null} once read or handed over. */
		private final PipelinedConnection[] connections;

		/**
		 * When each node's command was written, for its latency; {@code null} while every command went out in the
		 * first pass, at about {@link #start} (the usual case, which allocates nothing more).
		 */
		private long @Nullable [] writtenAt;

		/** Connections being borrowed (opened, or waiting for a free slot); {@code null} while there are none. */
		private @Nullable CompletableFuture<PipelinedConnection> @Nullable [] pending;

		private final NodeReply[] replies;

		private int unread;

		private int waiting;

		/** Whether the caller was interrupted before or during the round: its flag is set again at the end. */
		private boolean interrupted;

		/** Whether the first pass over the nodes is over: later writes have their own time. */
		private boolean firstPassDone;

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
				writeToAll();
				readUntilDone();
			}
			finally {
				for (int i = 0; i < this.connections.length; i++) {
					if (this.connections[i] != null) {
						// a connection whose reply was not read is closed by its pool, never reused
						Fanout.this.pools.get(i).giveBack(this.connections[i]);
					}
					if (this.pending != null && this.pending[i] != null) {
						keepWhenReady(Fanout.this.pools.get(i), this.pending[i]);
					}
				}
				if (this.interrupted || Thread.interrupted()) {
					Thread.currentThread().interrupt();
				}
			}
			return this.replies;
		}

		/** When the node's command was written. */
		private long writtenAt(int node) {
			return (this.writtenAt != null) ? this.writtenAt[node] : this.start;
		}

		/** Clears the caller's interrupt flag before blocking I/O, remembering it for the end of the round. */
		private void deferInterrupt() {
			if (Thread.interrupted()) {
				this.interrupted = true;
			}
		}

		/**
		 * Writes the command to every node with an idle connection; the others are borrowed without blocking and
		 * written to as their connection comes.
		 */
		private void writeToAll() {
			long slowAbove = slowThreshold();
			for (int i = 0; i < this.connections.length; i++) {
				if (this.selected != null && !this.selected[i]) {
					continue;
				}
				NodeConnectionPool pool = Fanout.this.pools.get(i);
				PipelinedConnection idle = pool.borrowIdle();
				if (idle != null) {
					write(i, idle);
					continue;
				}
				if (!Fanout.this.patient && pool.expectedLatencyNanos() > slowAbove && pool.connectionsInUse() > 0) {
					// slow, and its connections wait for its replies: one more connection would only be waited for
					// too, so a slow node keeps the connections it has instead of getting new ones every round
					this.replies[i] = NodeReply.notWritten(i, new JedisConnectionException("not waited for: the "
							+ "node is slow to answer and its connections are busy", new SocketTimeoutException()),
							System.nanoTime() - this.start);
					continue;
				}
				CompletableFuture<PipelinedConnection> borrowed = pool.borrow(millisLeft(this.deadline));
				if (borrowed.isDone()) {
					write(i, borrowed);
				}
				else if (!Fanout.this.patient && pool.expectedLatencyNanos() >= Fanout.this.timeoutNanos / 2) {
					// it let earlier rounds wait (frozen, or far away): connect it for a later round, not this one
					keepWhenReady(pool, borrowed);
					this.replies[i] = NodeReply.notWritten(i, new JedisConnectionException("not waited for: "
							+ "connecting in the background, since the node was slow to answer",
							new SocketTimeoutException()), System.nanoTime() - this.start);
				}
				else {
					if (this.pending == null) {
						this.pending = newPendingArray(this.connections.length);
					}
					this.pending[i] = borrowed;
					this.waiting++;
				}
			}
			this.firstPassDone = true;
		}

		/**
		 * The latency above which a node counts as slow: several times the fastest node's, and more than a busy
		 * machine's scheduling delay. Relative, so that a loaded client, whose every reply waits for a CPU, does not
		 * take healthy nodes for slow ones.
		 */
		private long slowThreshold() {
			long fastest = Long.MAX_VALUE;
			for (NodeConnectionPool pool : Fanout.this.pools) {
				fastest = Math.min(fastest, pool.expectedLatencyNanos());
			}
			return Math.max(LAG_SLACK_NANOS, 4 * fastest);
		}

		/**
		 * Reads replies and writes to connections as they come, until every node has answered or failed, the
		 * deadline has passed, or the early exit settles the round.
		 */
		private void readUntilDone() {
			if (settled()) {
				return;
			}
			while (this.unread + this.waiting > 0) {
				boolean progress = writeToReadyConnections();
				int arrived = (this.unread > 0) ? arrivedReply() : -1;
				if (arrived >= 0) {
					read(arrived);
					progress = true;
				}
				if (progress) {
					if (settled()) {
						return;
					}
					continue;
				}
				if (System.nanoTime() - this.deadline >= 0) {
					timeOutTheRest();
					return;
				}
				awaitNextEvent();
				if (settled()) {
					return;
				}
			}
		}

		/**
		 * Waits for what is expected first: a blocking read of the node expected to answer first, when nothing else
		 * may come sooner; else a short park before looking again.
		 */
		private void awaitNextEvent() {
			int next = expectedFirst();
			long now = System.nanoTime();
			if (next >= 0) {
				long due = writtenAt(next) + Fanout.this.pools.get(next).expectedLatencyNanos();
				if (this.waiting == 0 || due - now <= MAX_PARK_NANOS) {
					// the node expected to answer first: no faster one is still out
					read(next);
					return;
				}
			}
			LockSupport.parkNanos(Math.min(MAX_PARK_NANOS, Math.max(1, this.deadline - now)));
			deferInterrupt();
		}

		/** Whether the early exit says the round is settled; if so, finishes it. */
		private boolean settled() {
			if (this.exit == null || this.unread + this.waiting == 0 || !this.exit.settled(this.replies)) {
				return false;
			}
			readExpectedSoon();
			handOver();
			return true;
		}

		/** Writes the command to every connection that has become ready. */
		private boolean writeToReadyConnections() {
			if (this.waiting == 0) {
				return false;
			}
			boolean progress = false;
			for (int i = 0; i < this.pending.length; i++) {
				if (this.pending[i] != null && this.pending[i].isDone()) {
					CompletableFuture<PipelinedConnection> ready = this.pending[i];
					this.pending[i] = null;
					this.waiting--;
					write(i, ready);
					progress = true;
				}
			}
			return progress;
		}

		/** A node whose reply has arrived (bytes are waiting), or -1. */
		private int arrivedReply() {
			for (int i = 0; i < this.connections.length; i++) {
				if (this.connections[i] != null && this.connections[i].replyArrived()) {
					return i;
				}
			}
			return -1;
		}

		/** The unread node expected to answer first, by when it was written and how fast it usually answers. */
		private int expectedFirst() {
			int first = -1;
			long firstDue = 0;
			for (int i = 0; i < this.connections.length; i++) {
				if (this.connections[i] != null) {
					long due = writtenAt(i) + Fanout.this.pools.get(i).expectedLatencyNanos();
					if (first < 0 || due - firstDue < 0) {
						first = i;
						firstDue = due;
					}
				}
			}
			return first;
		}

		/**
		 * Once a round is settled, reads the replies that have arrived and those of nodes expected to answer soon:
		 * within about twice the time this round took to settle, at least a few milliseconds. Connections that come
		 * within that time are written to as well, so that every healthy node gets the command. Only a node known to
		 * be lagging, or whose connection is slow to come, is not waited for, so a healthy cluster, even a busy one
		 * whose replies straggle by a few milliseconds, is read in full, with no other thread involved.
		 */
		private void readExpectedSoon() {
			long settledAfter = System.nanoTime() - this.start;
			long patience = this.start + settledAfter + Math.max(LAG_SLACK_NANOS, settledAfter);
			while (this.unread + this.waiting > 0) {
				boolean progress = writeToReadyConnections();
				int next = (this.unread > 0) ? arrivedReply() : -1;
				if (next < 0 && this.unread > 0) {
					int first = expectedFirst();
					long due = writtenAt(first) + Fanout.this.pools.get(first).expectedLatencyNanos();
					if (due - patience <= 0 && (this.waiting == 0 || due - System.nanoTime() <= MAX_PARK_NANOS)) {
						next = first;
					}
				}
				if (next >= 0) {
					read(next);
				}
				else if (!progress) {
					// a connection still being opened gets a few milliseconds, not the patience of a late reply
					long connectPatience = this.start + settledAfter + LAG_SLACK_NANOS;
					long now = System.nanoTime();
					if (!pendingFastNode(connectPatience - this.start) || now - connectPatience >= 0) {
						return;
					}
					LockSupport.parkNanos(Math.min(MAX_PARK_NANOS, connectPatience - now));
					deferInterrupt();
				}
			}
		}

		/**
		 * Whether a connection is still being borrowed for a node that answers within the given time: one worth
		 * waiting for (a slow node's connections are busy with its late replies, and it would not answer in time).
		 */
		private boolean pendingFastNode(long withinNanos) {
			if (this.pending == null) {
				return false;
			}
			for (int i = 0; i < this.pending.length; i++) {
				if (this.pending[i] != null && Fanout.this.pools.get(i).expectedLatencyNanos() <= withinNanos) {
					return true;
				}
			}
			return false;
		}

		private void read(int node) {
			PipelinedConnection connection = this.connections[node];
			this.connections[node] = null;
			this.unread--;
			deferInterrupt();
			NodeConnectionPool pool = Fanout.this.pools.get(node);
			try {
				connection.setSoTimeout(millisLeft(this.deadline));
				Object value = connection.readReply();
				this.replies[node] = NodeReply.replied(node, value, System.nanoTime() - this.start);
			}
			catch (JedisException ex) {
				this.replies[node] = failed(node, ex);
			}
			finally {
				pool.giveBack(connection);
			}
			NodeReply.Kind kind = this.replies[node].kind();
			if (kind != NodeReply.Kind.INTERRUPTED && kind != NodeReply.Kind.UNREACHABLE) {
				pool.replied(System.nanoTime() - writtenAt(node));
			}
		}

		/** Reads what the nodes still owe, each within what is left of the deadline (about nothing), so they time out. */
		private void timeOutTheRest() {
			for (int i = 0; i < this.connections.length; i++) {
				if (this.connections[i] != null) {
					read(i);
				}
				if (this.pending != null && this.pending[i] != null) {
					keepWhenReady(Fanout.this.pools.get(i), this.pending[i]);
					this.pending[i] = null;
					this.waiting--;
					this.replies[i] = NodeReply.notWritten(i, new JedisConnectionException(
							"connecting took longer than the node timeout", new SocketTimeoutException()),
							System.nanoTime() - this.start);
				}
			}
		}

		/**
		 * Stops waiting for the unread replies: after the early exit's follow-up command, if any, is written behind
		 * them, those connections go to their node's late-reply thread, which reads what is still to come and only
		 * then gives them back. Connections still being borrowed are kept for later rounds; nothing was written to
		 * them.
		 */
		private void handOver() {
			CommandArguments followUp = this.exit.toNotAwaited(this.replies);
			for (int i = 0; i < this.connections.length; i++) {
				if (this.pending != null && this.pending[i] != null) {
					keepWhenReady(Fanout.this.pools.get(i), this.pending[i]);
					this.pending[i] = null;
					this.waiting--;
					this.replies[i] = NodeReply.notAwaited(i, System.nanoTime() - this.start, false, false);
					continue;
				}
				PipelinedConnection connection = this.connections[i];
				if (connection == null) {
					continue;
				}
				boolean followedUp = false;
				if (followUp != null) {
					deferInterrupt();
					try {
						connection.send(followUp);
						connection.flushNow();
						followedUp = true;
					}
					catch (JedisException ex) {
						connection.setBroken();
					}
				}
				this.connections[i] = null;
				this.unread--;
				this.replies[i] = NodeReply.notAwaited(i, System.nanoTime() - this.start, true, followedUp);
				lateRead(i, connection, writtenAt(i), followedUp, this.exit);
			}
		}

		/** Writes to a connection that has been borrowed, or records why it could not be had. */
		private void write(int node, CompletableFuture<PipelinedConnection> borrowed) {
			PipelinedConnection connection;
			try {
				connection = borrowed.join();
			}
			catch (CompletionException | CancellationException ex) {
				Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
				JedisException failure = (cause instanceof JedisException jedis) ? jedis
						: new JedisConnectionException(cause);
				this.replies[node] = NodeReply.notWritten(node, failure, System.nanoTime() - this.start);
				return;
			}
			write(node, connection);
		}

		/** Writes and flushes the command to a borrowed connection; a failure shows in the node's reply. */
		private void write(int node, PipelinedConnection connection) {
			deferInterrupt();
			try {
				connection.send(this.command);
				connection.flushNow();
				this.connections[node] = connection;
				if (this.firstPassDone) {
					// later than the first pass: its latency counts from now
					if (this.writtenAt == null) {
						this.writtenAt = new long[this.connections.length];
						Arrays.fill(this.writtenAt, this.start);
					}
					this.writtenAt[node] = System.nanoTime();
				}
				this.unread++;
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
	 * Hands a connection whose replies a round did not wait for to its node's late-reply thread: it reads the reply
	 * (within the node timeout, counted from when the command was written) and the follow-up's, tells the early exit,
	 * then gives the connection back, closed unless every reply it owed was read.
	 */
	private void lateRead(int node, PipelinedConnection connection, long writtenAt, boolean followedUp,
			EarlyExit exit) {
		NodeConnectionPool pool = this.pools.get(node);
		pool.readLate(() -> {
			try {
				NodeReply reply = readLate(node, connection, writtenAt + this.timeoutNanos, writtenAt);
				if (reply.kind() != NodeReply.Kind.UNREACHABLE) {
					pool.replied(System.nanoTime() - writtenAt);
				}
				NodeReply followUp = null;
				if (followedUp) {
					followUp = connection.isBroken()
							? NodeReply.failed(node, new JedisConnectionException("the connection broke first"), 0)
							: readLate(node, connection, System.nanoTime() + this.timeoutNanos, writtenAt);
				}
				exit.lateReply(reply, followUp);
			}
			catch (RuntimeException ex) {
				logger.warn("Reading a late reply of node {} failed", node, ex);
			}
			finally {
				pool.giveBack(connection);
			}
		}, () -> pool.giveBack(connection));
	}

	private static NodeReply readLate(int node, PipelinedConnection connection, long deadline, long writtenAt) {
		try {
			connection.setSoTimeout(millisLeft(deadline));
			return NodeReply.replied(node, connection.readReply(), System.nanoTime() - writtenAt);
		}
		catch (JedisException ex) {
			return NodeReply.failed(node, ex, System.nanoTime() - writtenAt);
		}
	}

	@SuppressWarnings("unchecked")
	private static CompletableFuture<PipelinedConnection>[] newPendingArray(int n) {
		return new CompletableFuture[n];
	}

	/** Keeps a connection that is still being borrowed for a later round, once it is ready. */
	private static void keepWhenReady(NodeConnectionPool pool, CompletableFuture<PipelinedConnection> borrowed) {
		// cancelled, the borrow gives a connection that arrives later back to the pool itself
		if (!borrowed.cancel(false) && !borrowed.isCompletedExceptionally()) {
			// it arrived meanwhile: nobody has written to it
			pool.giveBack(borrowed.join());
		}
	}

	private static int millisLeft(long deadline) {
		long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
		// a socket timeout of 0 means "forever": never hand it out
		return (int) Math.max(1, Math.min(Integer.MAX_VALUE, left));
	}

}
