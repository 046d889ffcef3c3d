package dev.redlock.core.internal;

import java.util.List;
import java.util.function.Supplier;

import dev.redlock.core.internal.round.Redirections;
import dev.redlock.core.internal.round.VoterLayout;
import dev.redlock.core.internal.transport.NodeConnectionPool;
import redis.clients.jedis.HostAndPort;

/**
 * Where a cluster voter's redirections lead: to the voter's node that follows the named
 * cluster node as its shard's primary. Each redirection met also asks the
 * {@link SlotMapFollower} to read the slot maps again soon, so that the next rounds go to
 * the right shard at once.
 */
final class ClusterRedirections implements Redirections {

	private final List<NodeConnectionPool> pools;

	private final Supplier<VoterLayout> layouts;

	private final Runnable readMapsSoon;

	/**
	 * @param pools every node's pool, whose master is the shard primary it follows
	 * @param layouts the layout now
	 * @param readMapsSoon asks for the slot maps to be read again soon
	 */
	ClusterRedirections(List<NodeConnectionPool> pools, Supplier<VoterLayout> layouts, Runnable readMapsSoon) {
		this.pools = pools;
		this.layouts = layouts;
		this.readMapsSoon = readMapsSoon;
	}

	@Override
	public int nodeAt(int node, HostAndPort address) {
		VoterLayout layout = this.layouts.get();
		int voter = layout.voterOf(node);
		int first = layout.firstNodeOf(voter);
		for (int other = first; other < first + layout.nodeCountOf(voter); other++) {
			if (other != node && address.equals(this.pools.get(other).master().primary())) {
				return other;
			}
		}
		return -1;
	}

	@Override
	public void met(int node) {
		this.readMapsSoon.run();
	}

}
