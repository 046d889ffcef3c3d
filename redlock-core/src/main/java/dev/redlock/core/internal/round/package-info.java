/**
 * A round on every node at once: one command written to all nodes before any reply is
 * read, each node's reply, the early exit that stops waiting once the outcome is known,
 * and the quorum ({@link dev.redlock.core.internal.round.Quorum}) that settles it.
 *
 * <p>
 * Not API: public only so that the other packages of {@code redlock-core} can use it. It
 * may change without notice; use {@link dev.redlock.core.Redlock} and the types of
 * {@code dev.redlock.core}.
 */
@NullMarked
package dev.redlock.core.internal.round;

import org.jspecify.annotations.NullMarked;
