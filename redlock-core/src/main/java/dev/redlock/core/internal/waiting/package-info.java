/**
 * Waiting for a lock: the queues of waiting threads, the release notices they learn of a
 * release by, and the subscriptions to the nodes that send them.
 *
 * <p>
 * Not API: public only so that the other packages of {@code redlock-core} can use it. It
 * may change without notice; use {@link dev.redlock.core.Redlock} and the types of
 * {@code dev.redlock.core}.
 */
@NullMarked
package dev.redlock.core.internal.waiting;

import org.jspecify.annotations.NullMarked;
