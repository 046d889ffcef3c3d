package dev.redlock.core;

import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Sends one command to many nodes at once: it is written and flushed to every node's connection before any reply
 * is read, so a round costs about one round trip to the slowest node, not the sum. The whole round, connecting
 * included, shares one deadline: no node can hold it up past the node timeout.
 */
final class Fanout {

	private final List<NodeConnectionPool> pools;

	private final long timeoutNanos;

	Fanout(List<NodeConnectionPool> pools, long timeoutNanos) {
		this.pools = pools;
		this.timeoutNanos = timeoutNanos;
	}

	int size() {
		return this.pools.size();
	}

	/**
	 * Runs the command on the selected nodes.
	 * @param command the command, the same for every node
	 * @param selected which nodes to send to, by index; {@code null} for all
	 * @return one reply per node, {@code null} for nodes not selected
	 */
	NodeReply[] execute(CommandArguments command, boolean @Nullable [] selected) {
		int n = this.pools.size();
		long deadline = System.nanoTime() + this.timeoutNanos;
		PipelinedConnection[] connections = new PipelinedConnection[n];
		NodeReply[] replies = new NodeReply[n];
		try {
			for (int i = 0; i < n; i++) {
				if (selected != null && !selected[i]) {
					continue;
				}
				PipelinedConnection connection = null;
				try {
					connection = this.pools.get(i).borrow(millisLeft(deadline));
					connection.sendCommand(command);
					connection.flushNow();
					connections[i] = connection;
				}
				catch (JedisException ex) {
					replies[i] = NodeReply.failed(i, ex);
					if (connection != null) {
						this.pools.get(i).giveBack(connection);
					}
				}
			}
			for (int i = 0; i < n; i++) {
				PipelinedConnection connection = connections[i];
				if (connection == null) {
					continue;
				}
				try {
					connection.setSoTimeout(millisLeft(deadline));
					replies[i] = NodeReply.replied(i, connection.getUnflushedObject());
				}
				catch (JedisException ex) {
					replies[i] = NodeReply.failed(i, ex);
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

	private static int millisLeft(long deadline) {
		long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
		// a socket timeout of 0 means "forever": never hand it out
		return (int) Math.max(1, Math.min(Integer.MAX_VALUE, left));
	}

}
