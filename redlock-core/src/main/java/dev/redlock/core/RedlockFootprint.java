package dev.redlock.core;

import java.util.List;

/**
 * What a {@link Redlock} holds on to now: for watching it over a long run, where none of
 * these may grow without bound ({@link Redlock#footprint()}).
 *
 * @param connections open connections to each node (idle, in a round, reading a late
 * reply, or shared by the rounds), in configuration order; a subscription's own
 * connection is not counted
 * @param idleConnections idle connections kept for each node, in configuration order
 * @param queuedCleanups lock values waiting to be removed from nodes that did not confirm
 * their removal in time
 * @param scheduledTasks runs queued on the renewal thread (renewals, watches, clean-ups,
 * idle subscription closes)
 * @param waitingThreads threads waiting for a lock
 * @param heldLeases leases held now
 */
public record RedlockFootprint(List<Integer> connections, List<Integer> idleConnections, int queuedCleanups,
		int scheduledTasks, int waitingThreads, int heldLeases) {

	/**
	 * Returns the connections open to every node.
	 * @return the sum of {@link #connections()}
	 */
	public int totalConnections() {
		return this.connections.stream().mapToInt(Integer::intValue).sum();
	}

}
