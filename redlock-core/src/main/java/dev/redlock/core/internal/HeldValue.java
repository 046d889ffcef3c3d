package dev.redlock.core.internal;

import dev.redlock.core.internal.protocol.RawArgument;

/**
 * Where a lease's value may be: its key and value, and the nodes its acquisition reached.
 * A release must reach every node that may hold the value, including those whose
 * {@code SET} reply was never read.
 *
 * @param key the key as sent to the nodes
 * @param value the lease's random value
 * @param writtenTo the nodes the acquisition wrote to, one bit per node index (all nodes
 * from index 64 on count as written)
 * @param answeredLate the nodes whose acquisition reply was left to their late-reply
 * thread, one bit per node index: a release sent on another connection could reach such a
 * node before the {@code SET} it was not waited for
 */
public record HeldValue(RawArgument key, RawArgument value, long writtenTo, long answeredLate) {

	/** Whether the acquisition wrote to the node, so that it may hold the value. */
	boolean mayBeOn(int node) {
		return isSet(this.writtenTo, node);
	}

	/** Whether a node's bit is set in a mask of these (index 64 on: always). */
	static boolean isSet(long mask, int node) {
		return node >= Long.SIZE || (mask & (1L << node)) != 0;
	}

}
