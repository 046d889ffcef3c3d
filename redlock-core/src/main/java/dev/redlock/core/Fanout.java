package dev.redlock.core;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Sends one command to many nodes at once: it is written and flushed to every node's
 * connection before any reply is read, so a round costs about one round trip, not the
 * sum. The whole round, waiting for connections included, shares one deadline, and no
 * node's connection or pool can eat another node's share of it: connections that are not
 * ready are waited for while the other nodes are read. Replies are read in the order they
 * arrive; when none has arrived, the round waits for the node expected to answer first
 * (by its measured latency), never for a node known to be slow while a faster one is
 * still out. A round with an {@link EarlyExit} stops waiting as soon as the replies read
 * settle it, so a slow or frozen minority costs the caller nothing: what is left is read
 * by each node's late-reply thread.
 */
final class Fanout {

	private static final Logger logger = LoggerFactory.getLogger(Fanout.class);

	/**
	 * How much later than expected a node may answer and still be waited for once a round
	 * is settled (at least; as long again as the round took to settle, if longer): more
	 * than a busy machine's scheduling delay, less than a frozen process, a failover or a
	 * congested link.
	 */
	static final long LAG_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

	/**
	 * The longest a round parks between two looks at replies that are expected later and
	 * connections being opened.
	 */
	static final long MAX_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(500);

	private final List<NodeConnectionPool> pools;

	private final long timeoutNanos;

	/**
	 * Whether rounds wait for a connection to every node, even a slow one's: for work off
	 * the caller's path, such as a late clean-up, which must reach the node rather than
	 * be quick.
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

	List<NodeConnectionPool> pools() {
		return this.pools;
	}

	long timeoutNanos() {
		return this.timeoutNanos;
	}

	/**
	 * Whether rounds wait for every node, slow ones included: for the clean-up, which is
	 * off the caller's path.
	 */
	boolean patient() {
		return this.patient;
	}

	/**
	 * Runs the command on the selected nodes. Never throws for a node's failure: each
	 * shows in its reply.
	 * @param command the command, the same for every node
	 * @param selected which nodes to send to, by index; {@code null} for all
	 * @return one reply per node, {@code null} for nodes not selected
	 */
	NodeReply[] execute(CommandArguments command, boolean @Nullable [] selected) {
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
	NodeReply[] execute(CommandArguments command, boolean @Nullable [] selected, @Nullable EarlyExit exit) {
		return new FanoutRound(this, command, selected, exit).run();
	}

	/**
	 * Decides when a round may stop waiting for the nodes that have not answered yet.
	 */
	interface EarlyExit {

		/**
		 * Whether the replies read so far settle the round.
		 * @param replies the replies read so far, {@code null} for nodes not read (yet)
		 * or not asked
		 * @return {@code true} to stop waiting for the others
		 */
		boolean settled(NodeReply[] replies);

		/**
		 * What to send, without waiting for its reply, to the nodes whose reply is not
		 * awaited.
		 * @param replies the replies that settled the round
		 * @return the command, or {@code null} for none
		 */
		@Nullable CommandArguments toNotAwaited(NodeReply[] replies);

		/**
		 * Told, on the node's late-reply thread, how a node not awaited answered in the
		 * end. Whatever it throws is logged; the connection is closed unless every reply
		 * it owed was read.
		 * @param reply its reply, or its timeout or failure
		 * @param followUp the reply to the follow-up, or its failure; {@code null} when
		 * none was written
		 */
		void lateReply(NodeReply reply, @Nullable NodeReply followUp);

	}

	/**
	 * Hands a connection whose replies a round did not wait for to its node's late-reply
	 * thread: it reads the reply (within the node timeout, counted from when the command
	 * was written) and the follow-up's, tells the early exit, then gives the connection
	 * back, closed unless every reply it owed was read.
	 */
	void lateRead(int node, PipelinedConnection connection, long writtenAt, boolean followedUp, EarlyExit exit) {
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
	static CompletableFuture<PipelinedConnection>[] newPendingArray(int n) {
		return new CompletableFuture[n];
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

	/**
	 * Writes a command behind one whose reply is still owed; a write that fails breaks
	 * the connection.
	 */
	static boolean sendBehind(PipelinedConnection connection, CommandArguments followUp) {
		try {
			connection.send(followUp);
			connection.flushNow();
			return true;
		}
		catch (JedisException ex) {
			connection.setBroken();
			return false;
		}
	}

	/**
	 * Whether a connection is still being borrowed for a node that answers within the
	 * given time: one worth waiting for (a slow node's connections are busy with its late
	 * replies, and it would not answer in time).
	 */
	static boolean pendingFastNode(CompletableFuture<PipelinedConnection> @Nullable [] pending,
			List<NodeConnectionPool> pools, long withinNanos) {
		if (pending == null) {
			return false;
		}
		for (int i = 0; i < pending.length; i++) {
			if (pending[i] != null && pools.get(i).expectedLatencyNanos() <= withinNanos) {
				return true;
			}
		}
		return false;
	}

	static int millisLeft(long deadline) {
		long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
		// a socket timeout of 0 means "forever": never hand it out
		return (int) Math.max(1, Math.min(Integer.MAX_VALUE, left));
	}

}
