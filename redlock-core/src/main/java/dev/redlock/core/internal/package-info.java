/**
 * The algorithm, over the layers below it: an acquisition round on every node and how it
 * is won ({@link dev.redlock.core.internal.AcquireRound}), the rounds of the lock scripts
 * that extend and release a lease ({@link dev.redlock.core.internal.ScriptRounds}), the
 * nodes and their life ({@link dev.redlock.core.internal.NodeGroup}), the clean-up of
 * values left behind, the lock values, the listeners' events and the checks of a
 * configuration against the nodes.
 *
 * <p>
 * Not API: public only so that the other packages of {@code redlock-core} can use it. It
 * may change without notice; use {@link dev.redlock.core.Redlock} and the types of
 * {@code dev.redlock.core}.
 */
@NullMarked
package dev.redlock.core.internal;

import org.jspecify.annotations.NullMarked;
