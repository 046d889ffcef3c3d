package dev.redlock.core;

import org.jspecify.annotations.Nullable;

/**
 * Something {@link Redlock#verifyNodes()} found wrong with the nodes or settings. Errors:
 * one server listed twice under different addresses (the same {@code run_id}: it would
 * fake a quorum), a node that is a replica, a majority of nodes refusing our credentials,
 * a node whose user may run no script where one is needed (no native compare-and-delete,
 * or the restart quarantine on). Warnings: fewer than 3 nodes or an even count, a node
 * that cannot be reached now (a minority may be down at startup) or refuses our
 * credentials, a {@code maxmemory-policy} other than {@code noeviction} (lock keys carry
 * a TTL, so even {@code volatile-*} policies may evict them), and a default TTL below 3
 * node timeouts.
 *
 * @param severity whether it makes the locks unsafe ({@link Severity#ERROR}) or deserves
 * attention
 * @param node index of the voter concerned as configured ({@code nodes[i]}; a cluster
 * voter's shards are one), or {@code null} for the node list as a whole
 * @param message what is wrong and what to do, without credentials
 */
public record NodeFinding(Severity severity, @Nullable Integer node, String message) {

	/** How bad a finding is. */
	public enum Severity {

		/** The locks would be unsafe: refuse to start. */
		ERROR,

		/**
		 * Worth a warning: availability suffers, or a lock could be lost in some
		 * conditions.
		 */
		WARNING

	}

}
