package dev.redlock.core.internal.round;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.internal.transport.NodeConnectionPool;
import dev.redlock.core.internal.transport.PipelinedConnection;
import dev.redlock.core.internal.transport.SharedConnection;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.exceptions.JedisAskDataException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisRedirectionException;

/**
 * Sends one command to many nodes at once: it is written and flushed to every node's
 * connection before any reply is read (to the nodes known to be slow last), so a round
 * costs about one round trip, not the sum. The whole round, waiting for connections
 * included, shares one deadline, and no node's connection or pool can eat another node's
 * share of it: connections that are not ready are waited for while the other nodes are
 * read. The round waits for the node expected to answer first (by when it was written to
 * and its measured latency; of nodes that answer alike, the one written to first), never
 * for a node known to be slow while a faster one is still out; once that node's reply is
 * late, it reads whichever replies have arrived. A round with an {@link EarlyExit} stops
 * waiting as soon as the replies read settle it, so a slow or frozen minority costs the
 * caller nothing: what is left is read by each node's late-reply thread. A node that
 * answers a lock script's digest with {@code NOSCRIPT} is sent the same calls again by
 * the script's source, in a second round (see {@link RoundCommand}). A cluster node that
 * answers {@code MOVED} or {@code ASK} (after a slot moved, or while it moves) is sent
 * the same command at the node its voter follows there, in a second round ending by the
 * first's deadline ({@link Redirections}); batches are not sent again.
 *
 * @param pools the nodes' connection pools, in configuration order
 * @param timeoutNanos the deadline of a round, from its start
 * @param patient whether rounds wait for a connection to every node, even a slow one's:
 * for work off the caller's path, such as a late clean-up, which must reach the node
 * rather than be quick
 * @param bounded whether the rounds end by a deadline set by the caller ({@link #until}),
 * the second round to the nodes that lost a script included
 * @param deadline that deadline, a {@link System#nanoTime()} reading, when bounded
 * @param underway the rounds underway, shared by every fanout of the nodes
 * @param redirections where a cluster's redirections lead
 */
public record Fanout(List<NodeConnectionPool> pools, long timeoutNanos, boolean patient, boolean bounded, long deadline,
		RoundsUnderway underway, Redirections redirections) implements LateReader {

	private static final Logger logger = LoggerFactory.getLogger(Fanout.class);

	/** How an early exit's follow-up, always a single command, reads its reply. */
	private static final RoundCommand FOLLOW_UP = RoundCommand.of(new CommandArguments(Command.PING));

	public Fanout(List<NodeConnectionPool> pools, long timeoutNanos) {
		this(pools, timeoutNanos, false);
	}

	public Fanout(List<NodeConnectionPool> pools, long timeoutNanos, boolean patient) {
		this(pools, timeoutNanos, patient, false, 0, new RoundsUnderway(), Redirections.NONE);
	}

	/**
	 * A fanout that follows a cluster's redirections.
	 * @param redirections where they lead
	 */
	public Fanout(List<NodeConnectionPool> pools, long timeoutNanos, Redirections redirections) {
		this(pools, timeoutNanos, false, false, 0, new RoundsUnderway(), redirections);
	}

	/**
	 * The same fanout, its rounds cut at a deadline when that comes before their own, and
	 * a second round to the nodes that lost a script cut at it too: so that an attempt as
	 * a whole keeps its bound.
	 * @param deadline a {@link System#nanoTime()} reading
	 * @return the fanout, or {@code null} when the deadline has passed
	 */
	public @Nullable Fanout until(long deadline) {
		long left = deadline - System.nanoTime();
		if (left <= 0) {
			return null;
		}
		return new Fanout(this.pools, Math.min(left, this.timeoutNanos), this.patient, true, deadline, this.underway,
				this.redirections);
	}

	/**
	 * Runs the command on the selected nodes. Never throws for a node's failure: each
	 * shows in its reply.
	 * @param command the command, the same for every node
	 * @param selected which nodes to send to, by index; {@code null} for all
	 * @return one reply per node, {@code null} for nodes not selected
	 */
	public NodeReply[] execute(CommandArguments command, boolean @Nullable [] selected) {
		return execute(command, selected, null);
	}

	/**
	 * Runs the command on the selected nodes, reading replies in the order they arrive,
	 * and stops waiting once the early exit says the replies read so far settle the
	 * round.
	 *
	 * <p>
	 * The caller's interrupt flag is cleared for the round and set again after it: on a
	 * virtual thread, a blocking socket read with the flag set closes the socket, and a
	 * release must still reach the nodes when its caller was interrupted. An interrupt
	 * that arrives during a read shows as {@link NodeReply.Kind#INTERRUPTED} for that
	 * node only; the other nodes are still read.
	 * @param command the command, the same for every node
	 * @param selected which nodes to send to, by index; {@code null} for all
	 * @param exit when to stop waiting, and what to send to the nodes not waited for;
	 * {@code null} to wait for all
	 * @return one reply per node, {@code null} for nodes not selected,
	 * {@link NodeReply.Kind#NOT_AWAITED} for nodes whose reply was not waited for
	 */
	public NodeReply[] execute(CommandArguments command, boolean @Nullable [] selected, @Nullable EarlyExit exit) {
		return execute(RoundCommand.of(command), selected, exit);
	}

	/**
	 * Runs a command, possibly compound, on the selected nodes, as
	 * {@link #execute(CommandArguments, boolean[], EarlyExit)}. Calls of a lock script by
	 * digest go again by source to the nodes that answered {@code NOSCRIPT}, waiting for
	 * each of them (they just answered), even when the others settled the round: the call
	 * by source caches the script there again, else that node would refuse every call
	 * after. Their replies take the place of the refusals. Then the cluster's
	 * redirections are followed ({@link #followRedirections}).
	 */
	public NodeReply[] execute(RoundCommand command, boolean @Nullable [] selected, @Nullable EarlyExit exit) {
		boolean follows = this.redirections != Redirections.NONE;
		long roundDeadline = follows ? System.nanoTime() + this.timeoutNanos : 0;
		NodeReply[] replies = round(this.timeoutNanos, command, selected, exit);
		boolean[] lacking = lackingScript(command, replies);
		RoundCommand retry = (lacking != null) ? command.bySource() : null;
		Fanout again = (retry == null) ? null : this.bounded ? until(this.deadline) : this;
		if (again != null) {
			NodeReply[] bySource = round(again.timeoutNanos, retry, lacking, null);
			for (int i = 0; i < replies.length; i++) {
				if (lacking[i]) {
					replies[i] = RoundCommand.merge(replies[i], bySource[i]);
				}
			}
		}
		if (follows) {
			followRedirections(command, replies, roundDeadline);
		}
		return replies;
	}

	/**
	 * Sends the command again to where the nodes that answered {@code MOVED} or
	 * {@code ASK} redirect it: the node of the same voter that follows the named cluster
	 * node (behind {@code ASKING} for {@code ASK}), in one more round that ends by the
	 * first round's deadline and follows no further redirection. Each reply goes in its
	 * node's place, beside the redirection, which stays as what the first node answered
	 * (nothing ran there). Batches are not sent again: a redirected call in one stays
	 * that node's refusal, until the voter's slot map is read again.
	 * @param replies the round's replies, completed in place
	 * @param roundDeadline when the first round's time is up
	 */
	private void followRedirections(RoundCommand command, NodeReply[] replies, long roundDeadline) {
		boolean[] targets = null;
		RoundCommand[] byTarget = null;
		for (int node = 0; node < replies.length; node++) {
			NodeReply reply = replies[node];
			JedisRedirectionException redirection = (reply != null) ? reply.redirection() : null;
			if (redirection == null) {
				if (reply != null && redirectsSomeCall(reply)) {
					this.redirections.met(node);
				}
				continue;
			}
			this.redirections.met(node);
			int target = this.redirections.nodeAt(node, redirection.getTargetNode());
			RoundCommand own = (target >= 0 && command.followsRedirections()) ? command.forNodeIfAny(target) : null;
			if (own == null || replies[target] != null) {
				continue;
			}
			if (targets == null) {
				targets = new boolean[replies.length];
				byTarget = new RoundCommand[replies.length];
			}
			targets[target] = true;
			byTarget[target] = (redirection instanceof JedisAskDataException) ? own.asking() : own;
		}
		Fanout within = (targets == null) ? null
				: new Fanout(this.pools, this.timeoutNanos, this.patient, false, 0, this.underway, Redirections.NONE)
					.until(this.bounded ? Math.min(roundDeadline, this.deadline) : roundDeadline);
		if (within == null) {
			return;
		}
		NodeReply[] redirected = within.execute(RoundCommand.perNode(byTarget), targets, null);
		for (int node = 0; node < replies.length; node++) {
			if (targets[node]) {
				replies[node] = redirected[node];
			}
		}
	}

	/**
	 * Whether a call of a batch or compound was redirected, though the reply as a whole
	 * was not (a batch's call, or a marker read behind the lock's command).
	 */
	private static boolean redirectsSomeCall(NodeReply reply) {
		if (reply.value() instanceof List<?> answers) {
			for (Object answer : answers) {
				if (answer instanceof JedisRedirectionException) {
					return true;
				}
			}
		}
		return false;
	}

	/**
	 * One round. With the pipelined transport it goes over the nodes' shared connections
	 * while many other rounds are underway, whose commands it joins
	 * ({@link RoundsUnderway}); with few, over connections lent to it, which its caller
	 * reads itself, sooner than a reader thread could hand it the replies. A batch always
	 * goes over connections of its own, so that no lock's round queues behind it.
	 */
	private NodeReply[] round(long timeoutNanos, RoundCommand command, boolean @Nullable [] selected,
			@Nullable EarlyExit exit) {
		SharedConnection first = this.pools.get(0).shared();
		if (!command.measuresLatency() || first == null) {
			return new FanoutRound(this.pools, timeoutNanos, this.patient, this, command, selected, exit).run();
		}
		boolean shares = this.underway.start() || first.takesEveryRound();
		try {
			return shares ? new SharedRound(this.pools, timeoutNanos, command, selected, exit).run()
					: new FanoutRound(this.pools, timeoutNanos, this.patient, this, command, selected, exit).run();
		}
		finally {
			this.underway.end();
		}
	}

	/**
	 * The nodes that lack the script the command calls by digest, {@code null} for none.
	 */
	private static boolean @Nullable [] lackingScript(RoundCommand command, NodeReply[] replies) {
		if (!command.callsScript()) {
			return null;
		}
		boolean[] lacking = null;
		for (int i = 0; i < replies.length; i++) {
			if (replies[i] != null && RoundCommand.lacksScript(replies[i])) {
				if (lacking == null) {
					lacking = new boolean[replies.length];
				}
				lacking[i] = true;
			}
		}
		return lacking;
	}

	/**
	 * Hands a connection whose replies a round did not wait for to its node's late-reply
	 * thread: it reads the reply (within the node timeout, counted from when the command
	 * was written) and the follow-up's, tells the early exit, then gives the connection
	 * back, closed unless every reply it owed was read.
	 */
	@Override
	public void lateRead(int node, PipelinedConnection connection, RoundCommand command, long writtenAt,
			boolean followedUp, EarlyExit exit) {
		NodeConnectionPool pool = this.pools.get(node);
		pool.readLate(() -> {
			try {
				// a reply already there may be long past: looked for only where it counts
				boolean measures = command.measuresLatency();
				boolean foundWaiting = measures && connection.replyArrived();
				NodeReply reply = readLate(node, connection, command, writtenAt + this.timeoutNanos, writtenAt);
				if (measures && reply.kind() != NodeReply.Kind.UNREACHABLE) {
					pool.latency().replied(System.nanoTime() - writtenAt, foundWaiting);
				}
				NodeReply followUp = null;
				if (followedUp) {
					followUp = connection.isBroken()
							? NodeReply.failed(node, new JedisConnectionException("the connection broke first"), 0)
							: readLate(node, connection, FOLLOW_UP, System.nanoTime() + this.timeoutNanos, writtenAt);
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

	private static NodeReply readLate(int node, PipelinedConnection connection, RoundCommand command, long deadline,
			long writtenAt) {
		try {
			connection.readBy(deadline);
			return NodeReply.replied(node, command.readFrom(connection), System.nanoTime() - writtenAt);
		}
		catch (JedisException ex) {
			return NodeReply.failed(node, ex, System.nanoTime() - writtenAt);
		}
		finally {
			connection.clearDeadline();
		}
	}

}
