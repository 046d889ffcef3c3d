/**
 * The rules for forgetful nodes: a node that may have forgotten locks it granted
 * (restart, clock step, failover, rollback, flush, eviction) counts towards no quorum
 * until its quarantine is over
 * ({@link dev.redlock.core.internal.quarantine.NodeQuarantine}). Each grant is judged by
 * its node's marker and clock ({@link dev.redlock.core.internal.quarantine.NodeJudge});
 * probes and greetings read the nodes.
 *
 * <p>
 * Not API: public only so that the other packages of {@code redlock-core} can use it. It
 * may change without notice; use {@link dev.redlock.core.Redlock} and the types of
 * {@code dev.redlock.core}.
 */
@NullMarked
package dev.redlock.core.internal.quarantine;

import org.jspecify.annotations.NullMarked;
