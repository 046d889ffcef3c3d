/**
 * Auto-configuration of {@code dev.redlock.shedlock}.
 */
@NullMarked
package dev.redlock.autoconfigure.shedlock;

import org.jspecify.annotations.NullMarked;
