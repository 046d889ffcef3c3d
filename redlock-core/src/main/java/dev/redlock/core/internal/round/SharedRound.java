package dev.redlock.core.internal.round;

import java.util.List;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.internal.transport.NodeConnectionPool;
import dev.redlock.core.internal.transport.NodeLeftOutException;
import dev.redlock.core.internal.transport.PipelinedConnection;
import dev.redlock.core.internal.transport.RoundTimes;
import dev.redlock.core.internal.transport.SharedConnection;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * One command sent to many nodes over their shared connections: the pipelined transport's
 * round. The caller writes to every node (those known to be slow last), then waits,
 * parked, while each node's reader thread hands the round its reply. It stops at the
 * deadline, when every node has answered, or once the early exit settles the round and
 * the nodes expected soon have answered too (within about twice the time the round took
 * to settle, at least a few milliseconds), so a healthy cluster is read in full. A reply
 * that comes after the caller went on reaches the early exit on the node's late-reply
 * thread, with the reply to the follow-up written behind the call. The caller's interrupt
 * flag is cleared for the round and set again after it: an interrupt does not cut a round
 * short, which ends by its deadline anyway.
 */
final class SharedRound implements SharedConnection.Call {

	private static final Logger logger = LoggerFactory.getLogger(SharedRound.class);

	/** What became of a node's call once the caller went on without its reply. */
	private static final byte DROPPED = 1;

	private static final byte NOT_AWAITED = 2;

	private static final byte FOLLOWED_UP = 3;

	private final List<NodeConnectionPool> pools;

	private final RoundCommand command;

	private final boolean @Nullable [] selected;

	private final @Nullable EarlyExit exit;

	private final long start;

	private final long deadline;

	private final Thread caller;

	private final NodeReply[] replies;

	private final long[] writtenAt;

	/** Calls written whose reply has not come: guarded by this round. */
	private int outstanding;

	/** Whether the early exit said the replies settle the round: guarded. */
	private boolean settled;

	/**
	 * Once settled, until when the caller waits for the nodes expected by then: as long
	 * again as the round took to settle, at least {@link RoundTimes#LAG_SLACK_NANOS}.
	 * Guarded.
	 */
	private long patienceEnd;

	/** Whether the caller is parked (or about to park) until {@link #parkedUntil}. */
	private boolean parked;

	private long parkedUntil;

	/** Whether the caller went on: later replies are late. Guarded. */
	private boolean ended;

	/** What became of each node not answered when the caller went on. Guarded. */
	private byte @Nullable [] fates;

	/** Late replies waiting for their pair: the call's or the follow-up's. Guarded. */
	private @Nullable NodeReply @Nullable [] lateCalls;

	private @Nullable NodeReply @Nullable [] lateFollowUps;

	/** What the early exit threw on a reader thread, rethrown to the caller. Guarded. */
	private @Nullable RuntimeException exitFailure;

	private boolean interrupted;

	SharedRound(List<NodeConnectionPool> pools, long timeoutNanos, RoundCommand command, boolean @Nullable [] selected,
			@Nullable EarlyExit exit) {
		this.start = System.nanoTime();
		this.deadline = this.start + timeoutNanos;
		this.pools = pools;
		this.command = command;
		this.selected = selected;
		this.exit = exit;
		this.caller = Thread.currentThread();
		this.replies = new NodeReply[pools.size()];
		this.writtenAt = new long[pools.size()];
	}

	NodeReply[] run() {
		deferInterrupt();
		try {
			writeToAll();
			awaitReplies();
			goOn();
		}
		finally {
			if (this.interrupted || Thread.interrupted()) {
				Thread.currentThread().interrupt();
			}
		}
		return this.replies;
	}

	/**
	 * Writes the call to every selected node, those that answer quickly first: a node
	 * whose connection is being opened, or that fails at once, answers meanwhile.
	 */
	private void writeToAll() {
		int count = 0;
		for (int i = 0; i < this.replies.length; i++) {
			if (isSelected(i)) {
				count++;
			}
		}
		synchronized (this) {
			this.outstanding = count;
		}
		long slowAbove = WriteTimes.slowThreshold(this.pools);
		// decided once: other rounds change the estimates meanwhile, and a node must be
		// written to exactly once
		boolean[] slow = null;
		for (int i = 0; i < this.replies.length; i++) {
			if (isSelected(i)) {
				if (this.pools.get(i).latency().expectedNanos() > slowAbove) {
					slow = (slow != null) ? slow : new boolean[this.replies.length];
					slow[i] = true;
				}
				else {
					submit(i);
				}
			}
		}
		for (int i = 0; slow != null && i < slow.length; i++) {
			if (slow[i]) {
				submit(i);
			}
		}
	}

	private void submit(int node) {
		SharedConnection shared = this.pools.get(node).shared();
		if (shared == null) {
			throw new IllegalStateException("node " + node + " has no shared connection");
		}
		this.writtenAt[node] = System.nanoTime();
		shared.submit(this, node);
	}

	private boolean isSelected(int node) {
		return this.selected == null || this.selected[node];
	}

	/**
	 * Waits until every node answered, the deadline passed, or the round is settled and
	 * no node still out is expected before its patience ends. The first park ends
	 * {@link RoundTimes#LAG_SLACK_NANOS} after the start, before any patience can: the
	 * reader threads then need not wake the caller when the round settles, only when it
	 * can go on, so a round on a healthy cluster costs its caller one wake-up.
	 */
	private void awaitReplies() {
		long firstLook = this.start + RoundTimes.LAG_SLACK_NANOS;
		while (true) {
			long now = System.nanoTime();
			long wakeAt;
			synchronized (this) {
				this.parked = false;
				if (this.outstanding == 0 || this.exitFailure != null || now - this.deadline >= 0) {
					return;
				}
				if (this.settled) {
					if (now - this.patienceEnd >= 0 || !anyExpectedBy(this.patienceEnd)) {
						return;
					}
					wakeAt = earlier(this.patienceEnd, this.deadline);
				}
				else {
					wakeAt = (firstLook - now > 0) ? earlier(firstLook, this.deadline) : this.deadline;
				}
				this.parked = true;
				this.parkedUntil = wakeAt;
			}
			LockSupport.parkNanos(this, wakeAt - now);
			deferInterrupt();
		}
	}

	private static long earlier(long time, long other) {
		return (time - other < 0) ? time : other;
	}

	/** Whether a node still out is expected to answer by then. Guarded. */
	private boolean anyExpectedBy(long time) {
		for (int i = 0; i < this.replies.length; i++) {
			if (this.replies[i] == null && isSelected(i)
					&& this.writtenAt[i] + this.pools.get(i).latency().expectedNanos() - time <= 0) {
				return true;
			}
		}
		return false;
	}

	/**
	 * The caller goes on: the nodes still out are not awaited (a settled round: they get
	 * the early exit's follow-up) or timed out.
	 */
	private void goOn() {
		CommandArguments followUp = null;
		synchronized (this) {
			this.ended = true;
			if (this.exitFailure != null) {
				throw this.exitFailure;
			}
			if (this.outstanding == 0) {
				return;
			}
			long nanos = System.nanoTime() - this.start;
			followUp = this.settled ? this.exit.toNotAwaited(this.replies) : null;
			this.fates = new byte[this.replies.length];
			for (int i = 0; i < this.replies.length; i++) {
				if (this.replies[i] != null || !isSelected(i)) {
					continue;
				}
				if (this.settled) {
					this.replies[i] = NodeReply.notAwaited(i, nanos, true, followUp != null);
					this.fates[i] = (followUp != null) ? FOLLOWED_UP : NOT_AWAITED;
				}
				else {
					this.replies[i] = NodeReply.failed(i,
							NodeLeftOutException.asTimedOut("no reply within the node timeout"), nanos);
					this.fates[i] = DROPPED;
				}
			}
		}
		if (followUp != null) {
			BehindCall call = new BehindCall(RoundCommand.of(followUp), true);
			for (int i = 0; i < this.replies.length; i++) {
				if (this.fates[i] == FOLLOWED_UP) {
					this.pools.get(i).shared().submit(call, i);
				}
			}
		}
	}

	@Override
	public void writeTo(int node, PipelinedConnection connection) {
		this.command.forNode(node).writeTo(connection);
	}

	@Override
	public void readFrom(int node, PipelinedConnection connection) {
		NodeReply reply;
		try {
			Object value = this.command.forNode(node).readFrom(connection);
			reply = NodeReply.replied(node, value, System.nanoTime() - this.start);
		}
		catch (JedisDataException ex) {
			reply = NodeReply.failed(node, ex, System.nanoTime() - this.start);
		}
		if (this.command.measuresLatency()) {
			this.pools.get(node).latency().replied(System.nanoTime() - this.writtenAt[node], false);
		}
		answered(reply);
	}

	@Override
	public void failed(int node, JedisException failure, boolean written) {
		long nanos = System.nanoTime() - this.start;
		NodeReply reply = written ? NodeReply.failed(node, failure, nanos) : NodeReply.notWritten(node, failure, nanos);
		if (reply.kind() == NodeReply.Kind.UNREACHABLE) {
			this.pools.get(node).discardIdle();
		}
		else if (written && reply.kind() == NodeReply.Kind.TIMEOUT && this.command.measuresLatency()) {
			// a stalled connection: the node left a reply unanswered for twice the node
			// timeout, so it takes at least a round's timeout now, as a pooled round's
			// read that times out tells; rounds over pooled connections (renewals,
			// clean-up) then stop waiting for it
			long waited = System.nanoTime() - this.writtenAt[node];
			this.pools.get(node).latency().replied(Math.max(waited, this.deadline - this.start), false);
		}
		answered(reply);
	}

	@Override
	public long writeBy() {
		return this.deadline;
	}

	/** A node's reply, or its failure, on whichever thread it came. */
	private void answered(NodeReply reply) {
		if (answeredInTime(reply)) {
			return;
		}
		late(reply.node(), reply, false);
		if (RoundCommand.lacksScript(reply)) {
			reloadScripts(reply.node());
		}
	}

	/**
	 * Takes a reply for the round, unless the caller went on.
	 * @return whether the round took it
	 */
	private synchronized boolean answeredInTime(NodeReply reply) {
		int node = reply.node();
		if (this.ended) {
			return false;
		}
		if (this.replies[node] != null) {
			// its connection broke just after the reply was read: taken already
			return true;
		}
		this.replies[node] = reply;
		this.outstanding--;
		if (!this.settled && this.exit != null && this.outstanding > 0) {
			try {
				this.settled = this.exit.settled(this.replies);
			}
			catch (RuntimeException ex) {
				this.exitFailure = ex;
			}
			if (this.settled) {
				long now = System.nanoTime();
				this.patienceEnd = now + Math.max(RoundTimes.LAG_SLACK_NANOS, now - this.start);
			}
		}
		if (this.parked && (mayGoOn() || (this.settled && this.parkedUntil - this.patienceEnd > 0))) {
			// the caller goes on, or parks again until its patience ends
			this.parked = false;
			LockSupport.unpark(this.caller);
		}
		return true;
	}

	/** Whether the caller may go on without waiting for more replies. Guarded. */
	private boolean mayGoOn() {
		return this.outstanding == 0 || this.exitFailure != null || (this.settled && !anyExpectedBy(this.patienceEnd));
	}

	/**
	 * Loads the scripts the round called by digest again on a node that answered it, too
	 * late, that it lacks them: the next round's call by digest finds them there, rather
	 * than time out again before the round can send them by source. Loading runs nothing.
	 */
	private void reloadScripts(int node) {
		List<CommandArguments> loads = this.command.forNode(node).scriptLoads();
		SharedConnection shared = this.pools.get(node).shared();
		if (!loads.isEmpty() && shared != null) {
			shared.submit(new BehindCall(RoundCommand.pipelined(loads.toArray(new CommandArguments[0])), false), node);
		}
	}

	/**
	 * A reply that came after the caller went on: to the early exit, paired with the
	 * follow-up's when one was written; dropped for a node that timed out.
	 */
	private synchronized void late(int node, NodeReply reply, boolean isFollowUp) {
		byte fate = (this.fates != null) ? this.fates[node] : DROPPED;
		if (fate == NOT_AWAITED) {
			this.fates[node] = DROPPED;
			handToExit(node, reply, null);
		}
		else if (fate == FOLLOWED_UP) {
			NodeReply[] calls = (this.lateCalls != null) ? this.lateCalls
					: (this.lateCalls = new NodeReply[this.replies.length]);
			NodeReply[] followUps = (this.lateFollowUps != null) ? this.lateFollowUps
					: (this.lateFollowUps = new NodeReply[this.replies.length]);
			NodeReply[] mine = isFollowUp ? followUps : calls;
			NodeReply[] pair = isFollowUp ? calls : followUps;
			if (mine[node] != null) {
				// its connection broke just after the reply was read
				return;
			}
			if (pair[node] == null) {
				mine[node] = reply;
			}
			else {
				this.fates[node] = DROPPED;
				handToExit(node, isFollowUp ? pair[node] : reply, isFollowUp ? reply : pair[node]);
			}
		}
	}

	private void handToExit(int node, NodeReply reply, @Nullable NodeReply followUp) {
		EarlyExit exit = this.exit;
		this.pools.get(node).readLate(() -> {
			try {
				exit.lateReply(reply, followUp);
			}
			catch (Throwable ex) {
				logger.warn("Handling a late reply of node {} failed", node, ex);
			}
		}, () -> {
		});
	}

	/**
	 * Clears the caller's interrupt flag, remembering it for the end of the round.
	 */
	private void deferInterrupt() {
		if (Thread.interrupted()) {
			this.interrupted = true;
		}
	}

	/**
	 * A call written behind the round's own on a node: the early exit's follow-up, whose
	 * reply is paired with the late reply it follows, or the loading of scripts the node
	 * lacked, whose reply nobody needs (a refusal leaves the next call by source to load
	 * them, a lost connection the next connection's greeting).
	 */
	private final class BehindCall implements SharedConnection.Call {

		private final RoundCommand command;

		private final boolean followsUp;

		private final long writeBy;

		BehindCall(RoundCommand command, boolean followsUp) {
			this.command = command;
			this.followsUp = followsUp;
			this.writeBy = System.nanoTime() + (SharedRound.this.deadline - SharedRound.this.start);
		}

		@Override
		public void writeTo(int node, PipelinedConnection connection) {
			this.command.writeTo(connection);
		}

		@Override
		public void readFrom(int node, PipelinedConnection connection) {
			NodeReply reply;
			try {
				reply = NodeReply.replied(node, this.command.readFrom(connection),
						System.nanoTime() - SharedRound.this.start);
			}
			catch (JedisDataException ex) {
				reply = NodeReply.failed(node, ex, System.nanoTime() - SharedRound.this.start);
			}
			if (this.followsUp) {
				late(node, reply, true);
			}
		}

		@Override
		public void failed(int node, JedisException failure, boolean written) {
			if (this.followsUp) {
				late(node, NodeReply.failed(node, failure, System.nanoTime() - SharedRound.this.start), true);
			}
		}

		@Override
		public long writeBy() {
			return this.writeBy;
		}

	}

}
