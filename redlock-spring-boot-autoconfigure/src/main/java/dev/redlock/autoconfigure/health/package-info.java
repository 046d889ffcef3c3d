/**
 * Auto-configuration of {@code dev.redlock.health}.
 */
@NullMarked
package dev.redlock.autoconfigure.health;

import org.jspecify.annotations.NullMarked;
