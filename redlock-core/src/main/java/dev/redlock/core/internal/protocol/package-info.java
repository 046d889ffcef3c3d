/**
 * What goes on the wire: the lock scripts and their digests, arguments as sent, and the
 * readers of the replies of an acquisition and of {@code INFO}.
 *
 * <p>
 * Not API: public only so that the other packages of {@code redlock-core} can use it. It
 * may change without notice; use {@link dev.redlock.core.Redlock} and the types of
 * {@code dev.redlock.core}.
 */
@NullMarked
package dev.redlock.core.internal.protocol;

import org.jspecify.annotations.NullMarked;
