/**
 * Actuator health of the Redlock nodes: a {@code redlock} health contributor.
 */
@NullMarked
package dev.redlock.health;

import org.jspecify.annotations.NullMarked;
