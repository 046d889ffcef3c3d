package dev.redlock.core;

import org.jspecify.annotations.Nullable;

/**
 * Something {@link Redlock#verifyNodes()} found wrong with the nodes or settings.
 *
 * @param severity whether it makes the locks unsafe ({@link Severity#ERROR}) or deserves
 * attention
 * @param node index of the node concerned, or {@code null} for the node list as a whole
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
