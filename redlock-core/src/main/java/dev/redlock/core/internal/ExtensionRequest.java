package dev.redlock.core.internal;

import java.time.Duration;

import dev.redlock.core.internal.protocol.RawArgument;

/**
 * One lease's extension, as asked of the nodes.
 *
 * @param held the lease's key and value
 * @param ttl the new TTL, checked by {@link LockArguments#usableTtl}
 * @param start ticker reading from before it was sent: the new validity counts from there
 * @param currentValidUntil the validity it extends: an extension that comes back after it
 * does not count
 */
public record ExtensionRequest(HeldValue held, Duration ttl, long start, long currentValidUntil) {

	/** The new TTL as sent, in whole milliseconds. */
	RawArgument ttlArgument() {
		return RawArgument.of(this.ttl.toMillis());
	}

}
