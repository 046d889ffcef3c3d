package dev.redlock.core;

import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

/**
 * The second try of a lock script called by its digest ({@code EVALSHA}): the nodes that
 * answered {@code NOSCRIPT} lost their script cache ({@code SCRIPT FLUSH}) after the
 * connection loaded it. Nothing ran there, so the same call goes again by the script's
 * source, to those nodes only, and their new replies take the place of the refusals.
 */
final class ScriptRetry {

	private ScriptRetry() {
	}

	/**
	 * The nodes to call again by the script's source.
	 * @param replies the replies to the call by digest, {@code null} for nodes not asked
	 * @param lacksScript whether a reply says the node lacks the script
	 * @return one flag per node, or {@code null} when every node had it
	 */
	static boolean @Nullable [] nodesLackingScript(NodeReply[] replies, Predicate<NodeReply> lacksScript) {
		boolean[] lacking = null;
		for (int i = 0; i < replies.length; i++) {
			if (replies[i] != null && lacksScript.test(replies[i])) {
				if (lacking == null) {
					lacking = new boolean[replies.length];
				}
				lacking[i] = true;
			}
		}
		return lacking;
	}

	/**
	 * Puts the replies of the second try in the place of the first.
	 * @param replies the replies to the call by digest, changed in place
	 * @param retried the replies to the call by source
	 * @param retriedOn the nodes called again
	 */
	static void merge(NodeReply[] replies, NodeReply[] retried, boolean[] retriedOn) {
		for (int i = 0; i < replies.length; i++) {
			if (retriedOn[i]) {
				replies[i] = retried[i];
			}
		}
	}

}
