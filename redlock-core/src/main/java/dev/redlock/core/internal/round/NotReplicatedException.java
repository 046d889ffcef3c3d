package dev.redlock.core.internal.round;

import redis.clients.jedis.exceptions.JedisDataException;

/**
 * A node's reply to a write that must reach some of its replicas, when {@code WAIT} found
 * fewer of them acknowledged it within its timeout, or the node refused {@code WAIT}: the
 * write ran on the node and counts for nothing. Reads as an error reply.
 */
public final class NotReplicatedException extends JedisDataException {

	private static final long serialVersionUID = 1L;

	private NotReplicatedException(String message) {
		super(message);
	}

	static NotReplicatedException acknowledgedBy(long acknowledged, int required, long timeoutMillis) {
		return new NotReplicatedException("not replicated: " + acknowledged + " of the " + required
				+ " replicas waited for acknowledged the write within " + timeoutMillis + " ms");
	}

	static NotReplicatedException refused(String error, int required) {
		return new NotReplicatedException(
				"not replicated: the node refused WAIT for " + required + " replicas (" + error + ")");
	}

}
