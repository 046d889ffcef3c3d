package dev.redlock.core.internal.round;

import org.jspecify.annotations.Nullable;

/**
 * The reply of calls that {@code WAIT} followed, as {@link RoundCommand#readFrom} gives
 * it once the replicas acknowledged them: {@link NodeReply} keeps it in place of the
 * value, so that a reply waited for pays the extra field and the others do not.
 *
 * @param value the calls' reply
 * @param waitedNanos time from reading the calls' reply to reading {@code WAIT}'s
 */
record ReplicatedReply(@Nullable Object value, long waitedNanos) {

}
