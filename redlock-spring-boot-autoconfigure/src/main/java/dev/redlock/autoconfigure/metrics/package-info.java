/**
 * Auto-configuration of {@code dev.redlock.metrics}.
 */
@NullMarked
package dev.redlock.autoconfigure.metrics;

import org.jspecify.annotations.NullMarked;
