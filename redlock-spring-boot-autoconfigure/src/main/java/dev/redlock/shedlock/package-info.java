/**
 * A ShedLock lock provider on Redlock.
 */
@NullMarked
package dev.redlock.shedlock;

import org.jspecify.annotations.NullMarked;
