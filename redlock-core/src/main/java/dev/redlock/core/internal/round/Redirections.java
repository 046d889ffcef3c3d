package dev.redlock.core.internal.round;

import redis.clients.jedis.HostAndPort;

/**
 * Where a cluster voter's redirections lead: a node that answers {@code MOVED} or
 * {@code ASK} names the cluster node that serves the key now, which is another node of
 * the same voter (the one following that shard's primary). A {@link Fanout} sends the
 * command there within the round's deadline.
 */
public interface Redirections {

	/** For nodes of no cluster: nothing is followed. */
	Redirections NONE = new Redirections() {

		@Override
		public int nodeAt(int node, HostAndPort address) {
			return -1;
		}

		@Override
		public void met(int node) {
		}

	};

	/**
	 * The node of the same voter that follows the cluster node at an address.
	 * @param node the node that redirected
	 * @param address the address its redirection names
	 * @return that node's index, or {@code -1} when no other node of the voter follows it
	 * (a shard added after startup, or a failover not followed yet)
	 */
	int nodeAt(int node, HostAndPort address);

	/**
	 * Told of every redirection a round met, followed or not, so that the voter's slot
	 * map is read again soon.
	 * @param node the node that redirected
	 */
	void met(int node);

}
