/**
 * Interception of {@link dev.redlock.annotation.DistributedLock @DistributedLock}
 * methods.
 */
@NullMarked
package dev.redlock.interceptor;

import org.jspecify.annotations.NullMarked;
