/**
 * A held lease: its state, its renewal and release (alone or in batches with others), and
 * the set of leases held.
 *
 * <p>
 * Not API: public only so that the other packages of {@code redlock-core} can use it. It
 * may change without notice; use {@link dev.redlock.core.Redlock} and the types of
 * {@code dev.redlock.core}.
 */
@NullMarked
package dev.redlock.core.internal.lease;

import org.jspecify.annotations.NullMarked;
