package dev.redlock.interceptor;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;

import static org.assertj.core.api.Assertions.fail;

/**
 * What the nodes hold, for tests that check a lock on the nodes themselves.
 */
final class NodeKeys {

	private NodeKeys() {
	}

	/** On how many nodes the key exists. */
	static int holding(RedisNodes nodes, String key) {
		int count = 0;
		for (RedisNode node : nodes.nodes()) {
			if ("1".equals(node.command("EXISTS", key))) {
				count++;
			}
		}
		return count;
	}

	/**
	 * Waits until the key is gone from every node: a release returns once a quorum has
	 * deleted it, and the other nodes delete it a moment later, off the caller's thread.
	 */
	static void awaitReleased(RedisNodes nodes, String key) {
		awaitTrue(key + " is gone from every node", () -> holding(nodes, key) == 0);
	}

	/** Polls the condition until it holds, failing after 5 s. */
	static void awaitTrue(String what, BooleanSupplier condition) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() - deadline > 0) {
				fail("not within 5 s: " + what);
			}
			Thread.onSpinWait();
		}
	}

}
