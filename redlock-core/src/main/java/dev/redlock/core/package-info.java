/**
 * The Redlock algorithm over N independent Redis masters, without Spring.
 *
 * <p>
 * Entry point: {@link dev.redlock.core.Redlock}. A successful acquisition returns a
 * {@link dev.redlock.core.Lease}; a failed one throws
 * {@link dev.redlock.core.LockNotAcquiredException}. This package is the API; everything
 * else is in {@code dev.redlock.core.internal} and its packages, which are not API and
 * may change without notice. Their layers, each using only those below it:
 * {@code thread}, {@code protocol} (the scripts and the replies' shapes),
 * {@code transport} (connections to one node), {@code round} (a command on every node at
 * once, and the quorum that settles it), {@code quarantine} (the rules for forgetful
 * nodes), {@code internal} (the algorithm: acquisition, extension and release rounds, the
 * nodes' life), {@code waiting} and {@code lease}.
 */
@NullMarked
package dev.redlock.core;

import org.jspecify.annotations.NullMarked;
