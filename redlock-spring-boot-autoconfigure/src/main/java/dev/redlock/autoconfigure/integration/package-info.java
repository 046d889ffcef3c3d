/**
 * Auto-configuration of {@code dev.redlock.integration}.
 */
@NullMarked
package dev.redlock.autoconfigure.integration;

import org.jspecify.annotations.NullMarked;
