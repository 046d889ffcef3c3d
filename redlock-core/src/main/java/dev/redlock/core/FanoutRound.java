package dev.redlock.core;

import java.net.SocketTimeoutException;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * One command sent to many nodes: the state of a single {@link Fanout#execute} call, on
 * the caller's thread.
 */
final class FanoutRound {

	/**
	 * A read that takes longer than this waited for its reply, rather than finding it
	 * there.
	 */
	private static final long BLOCKED_NANOS = TimeUnit.MICROSECONDS.toNanos(200);

	private final Fanout fanout;

	private final CommandArguments command;

	private final boolean @Nullable [] selected;

	private final Fanout.@Nullable EarlyExit exit;

	private final long start = System.nanoTime();

	private final long deadline;

	/**
	 * Whether a read of this round had to wait for its reply, and when the last such read
	 * ended.
	 */
	private boolean blocked;

	private long blockedUntil;

	/**
	 * Connections written to whose reply is still to be read; {@code null} once read or
	 * handed over.
	 */
	private final PipelinedConnection[] connections;

	/**
	 * When each node's command was written, for its latency; {@code null} while every
	 * command went out in the first pass, at about {@link #start} (the usual case, which
	 * allocates nothing more).
	 */
	private long @Nullable [] writtenAt;

	/**
	 * Connections being borrowed (opened, or waiting for a free slot); {@code null} while
	 * there are none.
	 */
	private @Nullable CompletableFuture<PipelinedConnection> @Nullable [] pending;

	private final NodeReply[] replies;

	private int unread;

	private int waiting;

	/**
	 * Whether the caller was interrupted before or during the round: its flag is set
	 * again at the end.
	 */
	private boolean interrupted;

	/**
	 * Whether the first pass over the nodes is over: later writes have their own time.
	 */
	private boolean firstPassDone;

	FanoutRound(Fanout fanout, CommandArguments command, boolean @Nullable [] selected,
			Fanout.@Nullable EarlyExit exit) {
		this.fanout = fanout;
		this.deadline = this.start + fanout.timeoutNanos();
		this.command = command;
		this.selected = selected;
		this.exit = exit;
		int n = this.fanout.pools().size();
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
					// a connection whose reply was not read is closed by its pool, never
					// reused
					this.fanout.pools().get(i).giveBack(this.connections[i]);
				}
				if (this.pending != null && this.pending[i] != null) {
					Fanout.keepWhenReady(this.fanout.pools().get(i), this.pending[i]);
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

	/**
	 * Clears the caller's interrupt flag before blocking I/O, remembering it for the end
	 * of the round.
	 */
	private void deferInterrupt() {
		if (Thread.interrupted()) {
			this.interrupted = true;
		}
	}

	/**
	 * Writes the command to every node with an idle connection; the others are borrowed
	 * without blocking and written to as their connection comes.
	 */
	private void writeToAll() {
		long slowAbove = slowThreshold();
		for (int i = 0; i < this.connections.length; i++) {
			if (this.selected != null && !this.selected[i]) {
				continue;
			}
			NodeConnectionPool pool = this.fanout.pools().get(i);
			PipelinedConnection idle = pool.borrowIdle();
			if (idle != null) {
				write(i, idle);
				continue;
			}
			if (!this.fanout.patient() && pool.expectedLatencyNanos() > slowAbove && pool.connectionsInUse() > 0) {
				// slow, and its connections wait for its replies: one more connection
				// would only be waited for
				// too, so a slow node keeps the connections it has instead of getting new
				// ones every round
				this.replies[i] = NodeReply.notWritten(i,
						new JedisConnectionException(
								"not waited for: the " + "node is slow to answer and its connections are busy",
								new SocketTimeoutException()),
						System.nanoTime() - this.start);
				continue;
			}
			CompletableFuture<PipelinedConnection> borrowed = pool.borrow(Fanout.millisLeft(this.deadline));
			if (borrowed.isDone()) {
				write(i, borrowed);
			}
			else if (!this.fanout.patient() && pool.expectedLatencyNanos() >= this.fanout.timeoutNanos() / 2) {
				// it let earlier rounds wait (frozen, or far away): connect it for a
				// later round, not this one
				Fanout.keepWhenReady(pool, borrowed);
				this.replies[i] = NodeReply.notWritten(i,
						new JedisConnectionException(
								"not waited for: " + "connecting in the background, since the node was slow to answer",
								new SocketTimeoutException()),
						System.nanoTime() - this.start);
			}
			else {
				if (this.pending == null) {
					this.pending = Fanout.newPendingArray(this.connections.length);
				}
				this.pending[i] = borrowed;
				this.waiting++;
			}
		}
		this.firstPassDone = true;
	}

	/**
	 * The latency above which a node counts as slow: several times the fastest node's,
	 * and more than a busy machine's scheduling delay. Relative, so that a loaded client,
	 * whose every reply waits for a CPU, does not take healthy nodes for slow ones.
	 */
	private long slowThreshold() {
		long fastest = Long.MAX_VALUE;
		for (NodeConnectionPool pool : this.fanout.pools()) {
			fastest = Math.min(fastest, pool.expectedLatencyNanos());
		}
		return Math.max(Fanout.LAG_SLACK_NANOS, 4 * fastest);
	}

	/**
	 * Reads replies and writes to connections as they come, until every node has answered
	 * or failed, the deadline has passed, or the early exit settles the round.
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
	 * Waits for what is expected first: a blocking read of the node expected to answer
	 * first, when nothing else may come sooner; else a short park before looking again.
	 */
	private void awaitNextEvent() {
		int next = expectedFirst();
		long now = System.nanoTime();
		if (next >= 0) {
			long due = writtenAt(next) + this.fanout.pools().get(next).expectedLatencyNanos();
			if (this.waiting == 0 || due - now <= Fanout.MAX_PARK_NANOS) {
				// the node expected to answer first: no faster one is still out
				read(next);
				return;
			}
		}
		LockSupport.parkNanos(Math.min(Fanout.MAX_PARK_NANOS, Math.max(1, this.deadline - now)));
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

	/**
	 * The unread node expected to answer first, by when it was written and how fast it
	 * usually answers.
	 */
	private int expectedFirst() {
		int first = -1;
		long firstDue = 0;
		for (int i = 0; i < this.connections.length; i++) {
			if (this.connections[i] != null) {
				long due = writtenAt(i) + this.fanout.pools().get(i).expectedLatencyNanos();
				if (first < 0 || due - firstDue < 0) {
					first = i;
					firstDue = due;
				}
			}
		}
		return first;
	}

	/**
	 * Once a round is settled, reads the replies that have arrived and those of nodes
	 * expected to answer soon: within about twice the time this round took to settle, at
	 * least a few milliseconds. Connections that come within that time are written to as
	 * well, so that every healthy node gets the command. Only a node known to be lagging,
	 * or whose connection is slow to come, is not waited for, so a healthy cluster, even
	 * a busy one whose replies straggle by a few milliseconds, is read in full, with no
	 * other thread involved.
	 */
	private void readExpectedSoon() {
		long settledAfter = System.nanoTime() - this.start;
		long patience = this.start + settledAfter + Math.max(Fanout.LAG_SLACK_NANOS, settledAfter);
		while (this.unread + this.waiting > 0) {
			boolean progress = writeToReadyConnections();
			int next = (this.unread > 0) ? arrivedReply() : -1;
			if (next < 0 && this.unread > 0) {
				int first = expectedFirst();
				long due = writtenAt(first) + this.fanout.pools().get(first).expectedLatencyNanos();
				if (due - patience <= 0 && (this.waiting == 0 || due - System.nanoTime() <= Fanout.MAX_PARK_NANOS)) {
					next = first;
				}
			}
			if (next >= 0) {
				read(next);
			}
			else if (!progress) {
				// a connection still being opened gets a few milliseconds, not the
				// patience of a late reply
				long connectPatience = this.start + settledAfter + Fanout.LAG_SLACK_NANOS;
				long now = System.nanoTime();
				if (!Fanout.pendingFastNode(this.pending, this.fanout.pools(), connectPatience - this.start)
						|| now - connectPatience >= 0) {
					return;
				}
				LockSupport.parkNanos(Math.min(Fanout.MAX_PARK_NANOS, connectPatience - now));
				deferInterrupt();
			}
		}
	}

	private void read(int node) {
		PipelinedConnection connection = this.connections[node];
		this.connections[node] = null;
		this.unread--;
		deferInterrupt();
		NodeConnectionPool pool = this.fanout.pools().get(node);
		long readStart = System.nanoTime();
		try {
			connection.setSoTimeout(Fanout.millisLeft(this.deadline));
			Object value = connection.readReply();
			this.replies[node] = NodeReply.replied(node, value, System.nanoTime() - this.start);
		}
		catch (JedisException ex) {
			this.replies[node] = failed(node, ex);
		}
		finally {
			pool.giveBack(connection);
		}
		long readEnd = System.nanoTime();
		boolean waited = readEnd - readStart > BLOCKED_NANOS;
		// a reply that may have arrived while this round waited for another node says
		// nothing of how fast its
		// node is: counted, it would make a fast node look as slow as the one waited for
		boolean sampled = waited || !this.blocked || writtenAt(node) - this.blockedUntil >= 0;
		if (waited) {
			this.blocked = true;
			this.blockedUntil = readEnd;
		}
		NodeReply.Kind kind = this.replies[node].kind();
		if (sampled && kind != NodeReply.Kind.INTERRUPTED && kind != NodeReply.Kind.UNREACHABLE) {
			pool.replied(readEnd - writtenAt(node));
		}
	}

	/**
	 * Reads what the nodes still owe, each within what is left of the deadline (about
	 * nothing), so they time out.
	 */
	private void timeOutTheRest() {
		for (int i = 0; i < this.connections.length; i++) {
			if (this.connections[i] != null) {
				read(i);
			}
			if (this.pending != null && this.pending[i] != null) {
				Fanout.keepWhenReady(this.fanout.pools().get(i), this.pending[i]);
				this.pending[i] = null;
				this.waiting--;
				this.replies[i] = NodeReply.notWritten(i,
						new JedisConnectionException("connecting took longer than the node timeout",
								new SocketTimeoutException()),
						System.nanoTime() - this.start);
			}
		}
	}

	/**
	 * Stops waiting for the unread replies: after the early exit's follow-up command, if
	 * any, is written behind them, those connections go to their node's late-reply
	 * thread, which reads what is still to come and only then gives them back.
	 * Connections still being borrowed are kept for later rounds; nothing was written to
	 * them.
	 */
	private void handOver() {
		CommandArguments followUp = this.exit.toNotAwaited(this.replies);
		for (int i = 0; i < this.connections.length; i++) {
			if (this.pending != null && this.pending[i] != null) {
				Fanout.keepWhenReady(this.fanout.pools().get(i), this.pending[i]);
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
				followedUp = Fanout.sendBehind(connection, followUp);
			}
			this.connections[i] = null;
			this.unread--;
			this.replies[i] = NodeReply.notAwaited(i, System.nanoTime() - this.start, true, followedUp);
			this.fanout.lateRead(i, connection, writtenAt(i), followedUp, this.exit);
		}
	}

	/**
	 * Writes to a connection that has been borrowed, or records why it could not be had.
	 */
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

	/**
	 * Writes and flushes the command to a borrowed connection; a failure shows in the
	 * node's reply.
	 */
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
			this.fanout.pools().get(node).giveBack(connection);
			if (!(ex instanceof JedisException)) {
				throw ex;
			}
			this.replies[node] = failed(node, (JedisException) ex);
		}
	}

	/**
	 * Records a failure. When the caller was interrupted meanwhile, the failure is the
	 * interrupt's (on a virtual thread it closes the socket), not the node's. When the
	 * connection was lost (not merely slow), the node's other idle connections are most
	 * likely dead too (the node restarted, or the network reset them), so they are
	 * dropped rather than tried one per round.
	 */
	private NodeReply failed(int node, JedisException ex) {
		long nanos = System.nanoTime() - this.start;
		if (Thread.interrupted()) {
			this.interrupted = true;
			return NodeReply.interrupted(node, ex, nanos);
		}
		NodeReply reply = NodeReply.failed(node, ex, nanos);
		if (reply.kind() == NodeReply.Kind.UNREACHABLE) {
			this.fanout.pools().get(node).discardIdle();
		}
		return reply;
	}

}
