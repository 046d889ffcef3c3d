/**
 * The {@link dev.redlock.annotation.DistributedLock @DistributedLock} annotation.
 */
@NullMarked
package dev.redlock.annotation;

import org.jspecify.annotations.NullMarked;
