package dev.redlock.core;

import java.time.Duration;

/**
 * One lease's extension, as asked of the nodes.
 *
 * @param held the lease's key and value
 * @param ttl the new TTL, checked by {@link LockArguments#usableTtl}
 * @param start ticker reading from before it was sent: the new validity counts from there
 * @param currentValidUntil the validity it extends: an extension that comes back after it
 * does not count
 */
record ExtensionRequest(HeldValue held, Duration ttl, long start, long currentValidUntil) {

	/** The new TTL as sent, in whole milliseconds. */
	RawArgument ttlArgument() {
		return RawArgument.of(this.ttl.toMillis());
	}

}
