package dev.redlock.benchmarks;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.Protocol.Keyword;

/**
 * The physical limit a Redlock round is measured against: one {@code SET} of a fresh key
 * (the same shape as the lock's {@code SET NX PX}) written to every node's connection
 * before any reply is read, then every reply read. One connection per node per thread, no
 * pool, no bookkeeping.
 */
@State(Scope.Thread)
public class Floor {

	/** Short, so that the floor's keys do not pile up in the nodes' memory. */
	private static final long TTL_MILLIS = 1_000;

	private RawConnection[] connections;

	@Setup(Level.Trial)
	public void connect(RedisCluster cluster) {
		this.connections = JedisEndpoints.connectAll(cluster.directUris(), RawConnection::new, RawConnection[]::new);
	}

	@TearDown(Level.Trial)
	public void close() {
		JedisEndpoints.closeAll(this.connections);
	}

	/**
	 * One parallel round trip.
	 * @param key a fresh key
	 * @return the last node's reply
	 */
	public Object round(String key) {
		CommandArguments set = new CommandArguments(Command.SET).key(key).add("v").add(Keyword.PX).add(TTL_MILLIS);
		for (RawConnection connection : this.connections) {
			connection.sendCommand(set);
			connection.flushNow();
		}
		Object reply = null;
		for (RawConnection connection : this.connections) {
			reply = connection.getUnflushedObject();
		}
		return reply;
	}

}
