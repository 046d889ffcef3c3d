/**
 * The library's own threads: a thread started on demand that ends when idle, and the
 * scheduler of renewals, clean-ups and subscriptions.
 *
 * <p>
 * Not API: public only so that the other packages of {@code redlock-core} can use it. It
 * may change without notice; use {@link dev.redlock.core.Redlock} and the types of
 * {@code dev.redlock.core}.
 */
@NullMarked
package dev.redlock.core.internal.thread;

import org.jspecify.annotations.NullMarked;
