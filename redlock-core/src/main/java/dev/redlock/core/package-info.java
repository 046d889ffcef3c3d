/**
 * The Redlock algorithm over N independent Redis masters, without Spring.
 *
 * <p>
 * Entry point: {@link dev.redlock.core.Redlock}. A successful acquisition returns a
 * {@link dev.redlock.core.Lease}; a failed one throws
 * {@link dev.redlock.core.LockNotAcquiredException}.
 */
@NullMarked
package dev.redlock.core;

import org.jspecify.annotations.NullMarked;
