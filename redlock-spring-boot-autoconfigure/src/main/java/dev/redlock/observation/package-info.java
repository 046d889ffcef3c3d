/**
 * Micrometer Observations (and so tracing spans) around
 * {@link dev.redlock.annotation.DistributedLock @DistributedLock} methods.
 */
@NullMarked
package dev.redlock.observation;

import org.jspecify.annotations.NullMarked;
