/**
 * Micrometer meters for Redlock: a {@link dev.redlock.core.RedlockListener} that records
 * the locks' work, and the gauge of held leases.
 */
@NullMarked
package dev.redlock.metrics;

import org.jspecify.annotations.NullMarked;
