/**
 * Auto-configuration of {@code dev.redlock.endpoint}.
 */
@NullMarked
package dev.redlock.autoconfigure.endpoint;

import org.jspecify.annotations.NullMarked;
