/**
 * Connections to one node: its address and credentials, a connection that pipelines
 * commands and reads each reply by a deadline, the pool that keeps, warms and lends them,
 * the connector that opens and greets them.
 *
 * <p>
 * Not API: public only so that the other packages of {@code redlock-core} can use it. It
 * may change without notice; use {@link dev.redlock.core.Redlock} and the types of
 * {@code dev.redlock.core}.
 */
@NullMarked
package dev.redlock.core.internal.transport;

import org.jspecify.annotations.NullMarked;
