/**
 * Auto-configuration of {@code dev.redlock.observation}.
 */
@NullMarked
package dev.redlock.autoconfigure.observation;

import org.jspecify.annotations.NullMarked;
