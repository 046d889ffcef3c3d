/**
 * A ShedLock lock provider on Redlock.
 */
@NullMarked
package dev.redlock.autoconfigure.shedlock;

import org.jspecify.annotations.NullMarked;
