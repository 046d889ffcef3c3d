/**
 * Ahead-of-time processing support: the runtime hints a native image needs for
 * {@code @DistributedLock} methods.
 */
@NullMarked
package dev.redlock.aot;

import org.jspecify.annotations.NullMarked;
