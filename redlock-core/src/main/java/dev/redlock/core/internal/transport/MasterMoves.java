package dev.redlock.core.internal.transport;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import redis.clients.jedis.HostAndPort;

/**
 * One node's connections as its voter's master moves (a Sentinel failover): which
 * connections still go to the master, and what a move does to the others. A move ends the
 * node's back-off (it was the former master's), aborts the idle connections, breaks the
 * shared connection's line off, and tells the holders of connections of their own
 * ({@link #onMoved}). A master at a fixed address never moves.
 */
public final class MasterMoves {

	private static final Logger logger = LoggerFactory.getLogger(MasterMoves.class);

	private final RedisNodeUri uri;

	private final NodeConnector connector;

	private final IdleConnections idle;

	private final @Nullable SharedConnection shared;

	/**
	 * Told each time an idle connection is aborted: the pool opens another if it keeps
	 * one warm.
	 */
	private final Runnable idleConnectionClosed;

	private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

	MasterMoves(RedisNodeUri uri, NodeConnector connector, IdleConnections idle, @Nullable SharedConnection shared,
			Runnable idleConnectionClosed) {
		this.uri = uri;
		this.connector = connector;
		this.idle = idle;
		this.shared = shared;
		this.idleConnectionClosed = idleConnectionClosed;
		connector.master().onMove(this::moved);
	}

	private void moved() {
		this.connector.clearBackoff();
		// aborted, not closed: a TLS close to a former master that does not answer would
		// wait for its reply
		this.idle.drain().forEach((connection) -> {
			connection.abort();
			this.idleConnectionClosed.run();
		});
		if (this.shared != null) {
			this.shared.masterMoved();
		}
		for (Runnable listener : this.listeners) {
			try {
				listener.run();
			}
			catch (Throwable ex) {
				logger.warn("Redlock voter {}: a connection to the former master was not closed", this.uri.redacted(),
						ex);
			}
		}
	}

	/**
	 * Tells a task each time the voter's master moves, on the thread that found it: a
	 * holder of a connection of its own ({@link NodeConnectionPool#connect}) closes it
	 * there. Must not block.
	 * @param task what to do; a failure is logged and does not stop the others
	 */
	public void onMoved(Runnable task) {
		this.listeners.add(task);
	}

	/**
	 * Whether a connection was opened to the voter's master as it is now, not to one it
	 * has moved away from (always, for a master at a fixed address).
	 * @param connection a connection to this node
	 */
	public boolean isCurrent(PipelinedConnection connection) {
		return this.connector.isCurrent(connection);
	}

	/**
	 * Returns the address of the voter's master as known now: the node's own, or the one
	 * a Sentinel voter follows.
	 * @return {@code host:port}, or {@code null} while a Sentinel voter's is not known
	 */
	public @Nullable String address() {
		HostAndPort known = this.connector.master().known();
		return (known != null) ? SentinelGroup.format(known) : null;
	}

	/**
	 * Returns why a Sentinel voter's master refused {@code ROLE}, when it did: a
	 * connection that lands on a replica is then not told from one to the master.
	 * @return the refusal, or {@code null}
	 */
	public @Nullable String roleRefusal() {
		return this.connector.master().roleRefusal();
	}

	/**
	 * Returns the address of the voter's master as known now.
	 * @return the address, or {@code null} while a Sentinel voter's is not known
	 */
	public @Nullable HostAndPort primary() {
		return this.connector.master().known();
	}

	/**
	 * Reads the slot map of a cluster voter's shard node from one of the cluster's nodes,
	 * with the node's credentials and TLS.
	 * @param node the cluster node to ask
	 * @param timeoutMillis the bound for connecting and for the answer
	 * @return the map
	 * @throws redis.clients.jedis.exceptions.JedisException when the node cannot be asked
	 * or refuses
	 */
	public ClusterSlots readSlots(HostAndPort node, int timeoutMillis) {
		return this.connector.master().readSlots(node, timeoutMillis);
	}

	/**
	 * Returns the cluster nodes to ask for a shard node's slot map, its own shard's
	 * first; empty for other voters.
	 * @return the addresses
	 */
	public List<HostAndPort> clusterNodes() {
		return this.connector.master().clusterNodes();
	}

	/**
	 * Moves a cluster voter's shard node to the primary its cluster's slot map names now,
	 * once that server says it is a master: a failover of its shard.
	 * @param primary the primary named
	 * @param how where it was named, for the log
	 * @param timeoutMillis the bound for the check
	 * @return whether the node follows that primary now
	 */
	public boolean followTo(HostAndPort primary, String how, int timeoutMillis) {
		return this.connector.master().followTo(primary, how, timeoutMillis) != null;
	}

}
