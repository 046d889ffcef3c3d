package dev.redlock.core.internal.round;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.transport.NodeConnectionPool;
import dev.redlock.core.internal.transport.NodeLeftOutException;
import dev.redlock.core.internal.transport.PipelinedConnection;
import dev.redlock.core.internal.transport.RoundTimes;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.exceptions.JedisException;

/**
 * One command sent to many nodes: the state of a single {@link Fanout#execute} call, on
 * the caller's thread, with the times it wrote to each node.
 */
final class FanoutRound extends WriteTimes {

	private final List<NodeConnectionPool> pools;

	/** Whether to wait for a connection to every node, even a slow one's. */
	private final boolean patient;

	private final LateReader lateReader;

	private final RoundCommand command;

	private final boolean @Nullable [] selected;

	private final @Nullable EarlyExit exit;

	/** How many nodes the round asks: every node, or one per voter when selected. */
	private final int asked;

	private final long deadline;

	/**
	 * Connections written to whose reply is still to be read; {@code null} once read or
	 * handed over.
	 */
	private final PipelinedConnection[] connections;

	/** Connections being borrowed for this round. */
	private PendingBorrows pending = PendingBorrows.NONE;

	private final NodeReply[] replies;

	private int unread;

	/**
	 * Whether the caller was interrupted before or during the round: its flag is set
	 * again at the end.
	 */
	private boolean interrupted;

	FanoutRound(List<NodeConnectionPool> pools, long timeoutNanos, boolean patient, LateReader lateReader,
			RoundCommand command, boolean @Nullable [] selected, @Nullable EarlyExit exit) {
		super(System.nanoTime());
		this.pools = pools;
		this.patient = patient;
		this.lateReader = lateReader;
		this.deadline = this.start + timeoutNanos;
		this.command = command;
		this.selected = selected;
		this.exit = exit;
		int n = pools.size();
		this.connections = new PipelinedConnection[n];
		this.replies = new NodeReply[n];
		this.asked = (selected != null) ? count(selected) : n;
	}

	private static int count(boolean[] selected) {
		int count = 0;
		for (boolean one : selected) {
			count += one ? 1 : 0;
		}
		return count;
	}

	@Override
	int nodeCount() {
		return this.connections.length;
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
					this.pools.get(i).giveBack(this.connections[i]);
				}
				this.pending.keepForLater(i);
			}
			if (this.interrupted || Thread.interrupted()) {
				Thread.currentThread().interrupt();
			}
		}
		return this.replies;
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
	 * Writes the command to every node, those that answer quickly first: the round waits
	 * for them, not for the slow ones, whose writes would only delay theirs. A node found
	 * down counts before a slow one is left out (see {@link #writeTo}), so the slow nodes
	 * come down first, then the least slow.
	 */
	private void writeToAll() {
		long slowAbove = slowThreshold(this.pools);
		int[] slowNodes = null;
		int slowCount = 0;
		for (int i = 0; i < this.connections.length; i++) {
			if (this.selected == null || this.selected[i]) {
				if (this.pools.get(i).latency().expectedNanos() <= slowAbove) {
					writeTo(i, false);
				}
				else {
					// decided once: another round may change the estimate meanwhile
					slowNodes = (slowNodes != null) ? slowNodes : new int[this.connections.length];
					slowNodes[slowCount++] = i;
				}
			}
		}
		if (slowCount > 1) {
			leastSlowFirst(slowNodes, slowCount);
		}
		for (int k = 0; k < slowCount; k++) {
			writeTo(slowNodes[k], true);
		}
		firstPassDone();
	}

	/**
	 * Orders the slow nodes: those known down first (their borrows fail at once), then by
	 * expected latency. A busy machine can make a healthy node look slow; if it is then
	 * found down after the truly slow nodes, those were left out already, and the round
	 * loses its quorum.
	 */
	private void leastSlowFirst(int[] nodes, int count) {
		long[] rank = new long[this.pools.size()];
		for (int k = 0; k < count; k++) {
			NodeConnectionPool pool = this.pools.get(nodes[k]);
			rank[nodes[k]] = pool.isDown() ? -1 : pool.latency().expectedNanos();
		}
		for (int k = 1; k < count; k++) {
			int node = nodes[k];
			int j = k - 1;
			while (j >= 0 && rank[nodes[j]] > rank[node]) {
				nodes[j + 1] = nodes[j];
				j--;
			}
			nodes[j + 1] = node;
		}
	}

	/**
	 * Writes to a node's idle connection, or borrows one without blocking and writes to
	 * it when it comes; or leaves a slow node out, as timed out.
	 * @param slow whether the node counts as slow, as {@link #writeToAll} decided
	 */
	private void writeTo(int i, boolean slow) {
		NodeConnectionPool pool = this.pools.get(i);
		PipelinedConnection idle = pool.borrowIdle();
		if (idle != null) {
			write(i, idle);
			return;
		}
		boolean mayLeaveThisOut = mayLeaveOutAnother();
		if (mayLeaveThisOut && slow && pool.connectionsInUse() > 0) {
			// slow, and its connections wait for its replies: one more would only be
			// waited for too, so a slow node keeps the connections it has
			notWritten(i, "not waited for: the node is slow to answer and its connections are busy");
			return;
		}
		CompletableFuture<PipelinedConnection> borrowed = pool.borrow(RoundTimes.millisLeft(this.deadline));
		if (borrowed.isDone()) {
			write(i, borrowed);
		}
		else if (mayLeaveThisOut && pool.latency().expectedNanos() >= (this.deadline - this.start) / 2) {
			// it let earlier rounds wait (frozen, or far away): connect it for a
			// later round, not this one
			PendingBorrows.keepWhenReady(pool, borrowed);
			notWritten(i, "not waited for: connecting in the background, since the node was slow to answer");
		}
		else {
			if (this.pending == PendingBorrows.NONE) {
				this.pending = new PendingBorrows(this.pools);
			}
			this.pending.add(i, borrowed);
		}
	}

	/** Records a node that this round does not write to, as timed out. */
	private void notWritten(int node, String why) {
		this.replies[node] = NodeReply.notWritten(node, NodeLeftOutException.asTimedOut(why),
				System.nanoTime() - this.start);
	}

	/**
	 * Whether a slow node may be left out of this round: never more than a minority,
	 * failed nodes included. When most nodes look slow, the machine is busy, not the
	 * nodes, and a round without them could not reach a quorum.
	 */
	private boolean mayLeaveOutAnother() {
		return !this.patient && leavesAQuorum(NodeReply.count(this.replies) + 1, this.asked);
	}

	/**
	 * Whether so many nodes left out of a round, or failed, still leave it a quorum: a
	 * minority of the nodes it asks (one per voter when a key selects them), not of every
	 * node.
	 * @param leftOut how many nodes would be left out or failed
	 * @param asked how many nodes the round asks
	 */
	static boolean leavesAQuorum(int leftOut, int asked) {
		return leftOut <= Quorum.toleratedOf(asked);
	}

	/**
	 * Reads replies and writes to connections as they come, until every node has answered
	 * or failed, the deadline has passed, or the early exit settles the round.
	 */
	private void readUntilDone() {
		if (settled()) {
			return;
		}
		while (this.unread + this.pending.count() > 0) {
			boolean progress = writeToReadyConnections();
			// until its reply is late, the round waits for the node expected first
			int first = (this.unread > 0) ? expectedFirst() : -1;
			int arrived = (first >= 0 && isLate(dueAt(this.pools, first))) ? arrivedReply() : -1;
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
			awaitNextEvent(first);
			if (settled()) {
				return;
			}
		}
	}

	/**
	 * Waits for what is expected first: a blocking read of the node expected to answer
	 * first, when nothing else may come sooner; else a short park before looking again.
	 * @param next the unread node expected to answer first, or -1
	 */
	private void awaitNextEvent(int next) {
		long now = System.nanoTime();
		if (next >= 0) {
			long due = dueAt(this.pools, next);
			if (this.pending.count() == 0 || due - now <= RoundTimes.MAX_PARK_NANOS) {
				// the node expected to answer first: no faster one is still out
				read(next);
				return;
			}
		}
		LockSupport.parkNanos(Math.min(RoundTimes.MAX_PARK_NANOS, Math.max(1, this.deadline - now)));
		deferInterrupt();
	}

	/** Whether the early exit says the round is settled; if so, finishes it. */
	private boolean settled() {
		if (this.exit == null || this.unread + this.pending.count() == 0 || !this.exit.settled(this.replies)) {
			return false;
		}
		readExpectedSoon();
		handOver();
		return true;
	}

	/** Writes the command to every connection that has become ready. */
	private boolean writeToReadyConnections() {
		if (this.pending.count() == 0) {
			return false;
		}
		boolean progress = false;
		for (int i = 0; i < this.connections.length; i++) {
			CompletableFuture<PipelinedConnection> ready = this.pending.takeIfDone(i);
			if (ready != null) {
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

	/** The unread node expected to answer first. */
	private int expectedFirst() {
		return expectedFirst(this.pools, this.connections);
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
		long patience = this.start + settledAfter + Math.max(RoundTimes.LAG_SLACK_NANOS, settledAfter);
		while (this.unread + this.pending.count() > 0) {
			boolean progress = writeToReadyConnections();
			int next = -1;
			if (this.unread > 0) {
				int first = expectedFirst();
				long due = dueAt(this.pools, first);
				boolean soon = due - patience <= 0
						&& (this.pending.count() == 0 || due - System.nanoTime() <= RoundTimes.MAX_PARK_NANOS);
				// the node due soon is read, unless it is late: then what has arrived
				next = (soon && !isLate(due)) ? first : arrivedReply();
				if (next < 0 && soon) {
					next = first;
				}
			}
			if (next >= 0) {
				read(next);
			}
			else if (!progress) {
				// a connection still being opened gets a few milliseconds, not the
				// patience of a late reply
				long connectPatience = this.start + settledAfter + RoundTimes.LAG_SLACK_NANOS;
				long now = System.nanoTime();
				if (!this.pending.awaitsFastNode(connectPatience - this.start) || now - connectPatience >= 0) {
					return;
				}
				LockSupport.parkNanos(Math.min(RoundTimes.MAX_PARK_NANOS, connectPatience - now));
				deferInterrupt();
			}
		}
	}

	private void read(int node) {
		PipelinedConnection connection = this.connections[node];
		this.connections[node] = null;
		this.unread--;
		deferInterrupt();
		NodeConnectionPool pool = this.pools.get(node);
		boolean foundWaiting = mayHaveArrivedUnseen(node) && connection.replyArrived();
		long readStart = System.nanoTime();
		try {
			connection.readBy(this.deadline);
			RoundCommand own = this.command.forNode(node);
			Object value = (own.awaitsReplicas() && connection.tellsArrivals())
					? own.readFrom(connection, () -> readOthersUntilArrived(connection)) : own.readFrom(connection);
			this.replies[node] = NodeReply.replied(node, value, System.nanoTime() - this.start);
		}
		catch (JedisException ex) {
			this.replies[node] = failed(node, ex);
		}
		finally {
			connection.clearDeadline();
			pool.giveBack(connection);
		}
		long readEnd = System.nanoTime();
		NodeReply.Kind kind = this.replies[node].kind();
		if (this.command.measuresLatency() && measures(node, readStart, readEnd) && kind != NodeReply.Kind.INTERRUPTED
				&& kind != NodeReply.Kind.UNREACHABLE) {
			pool.latency().replied(readEnd - writtenAt(node), foundWaiting);
		}
	}

	/**
	 * While a node's reply waits for its replicas' acknowledgements ({@code WAIT}), reads
	 * the other nodes' replies as they arrive, so that a clock read with them is not read
	 * late (one waiting for replicas may take longer than the clock tolerance).
	 * @param waiting the connection whose {@code WAIT} reply is awaited
	 */
	private void readOthersUntilArrived(PipelinedConnection waiting) {
		while (!waiting.replyArrived()) {
			long now = System.nanoTime();
			if (now - this.deadline >= 0 || this.unread + this.pending.count() == 0) {
				// nothing else is owed: a blocking read of WAIT's reply does
				return;
			}
			writeToReadyConnections();
			int other = arrivedReply();
			if (other >= 0) {
				read(other);
				if (this.exit != null) {
					this.exit.readMeanwhile(this.replies);
				}
				continue;
			}
			LockSupport.parkNanos(Math.min(RoundTimes.MAX_PARK_NANOS, this.deadline - now));
			deferInterrupt();
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
			if (this.pending.keepForLater(i)) {
				notWritten(i, "connecting took longer than the node timeout");
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
			if (this.pending.keepForLater(i)) {
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
				followedUp = connection.sendBehind(followUp);
			}
			this.connections[i] = null;
			this.unread--;
			this.replies[i] = NodeReply.notAwaited(i, System.nanoTime() - this.start, true, followedUp);
			this.lateReader.lateRead(i, connection, this.command.forNode(i), writtenAt(i), followedUp, this.exit);
		}
	}

	/**
	 * Writes to a connection that has been borrowed, or records why it could not be had.
	 */
	private void write(int node, CompletableFuture<PipelinedConnection> borrowed) {
		try {
			write(node, PendingBorrows.connectionOf(borrowed));
		}
		catch (JedisException ex) {
			this.replies[node] = NodeReply.notWritten(node, ex, System.nanoTime() - this.start);
		}
	}

	/**
	 * Writes and flushes the command to a borrowed connection; a failure shows in the
	 * node's reply.
	 */
	private void write(int node, PipelinedConnection connection) {
		deferInterrupt();
		try {
			this.command.forNode(node).writeTo(connection);
			connection.flushNow();
			this.connections[node] = connection;
			written(node);
			this.unread++;
		}
		catch (RuntimeException ex) {
			connection.setBroken();
			this.pools.get(node).giveBack(connection);
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
			this.pools.get(node).discardIdle();
		}
		return reply;
	}

}
