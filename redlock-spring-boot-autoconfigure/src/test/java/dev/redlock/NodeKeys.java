package dev.redlock;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;

import static org.assertj.core.api.Assertions.fail;

/**
 * What the nodes hold, for tests that check a lock on the nodes themselves, and waiting
 * for it to change.
 */
public final class NodeKeys {

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static final String MARKER = "{fence}";

	private NodeKeys() {
	}

	/**
	 * On how many nodes the key exists.
	 * @param nodes the nodes
	 * @param key the key, with its prefix
	 * @return the number of nodes holding it
	 */
	public static int holding(RedisNodes nodes, String key) {
		int count = 0;
		for (RedisNode node : nodes.nodes()) {
			if ("1".equals(node.command("EXISTS", key))) {
				count++;
			}
		}
		return count;
	}

	/**
	 * How many keys the nodes hold in all, leaving out each node's Redlock marker
	 * (written while the restart quarantine is on), which is none of the locks' keys.
	 * Each node is read in one command: a client's probe may write the marker at any
	 * moment, so a {@code DBSIZE} and an {@code EXISTS} could disagree about it.
	 * @param nodes the nodes
	 * @return the number of keys other than the markers
	 */
	public static long count(RedisNodes nodes) {
		long keys = 0;
		for (RedisNode node : nodes.nodes()) {
			String names = node.command("KEYS", "*");
			if (names != null && !names.isEmpty()) {
				keys += Arrays.stream(names.split("\n")).filter((name) -> !name.equals(MARKER)).count();
			}
		}
		return keys;
	}

	/**
	 * The key's TTL in ms as a quorum sees it, -2 when there is no key: the median of the
	 * nodes' (a round returns on a quorum, so one node may not have the key, or not yet).
	 * @param nodes the nodes, an odd number of them
	 * @param key the key, with its prefix
	 * @return the median of the nodes' {@code PTTL}
	 */
	public static long quorumPttl(RedisNodes nodes, String key) {
		return nodes.nodes()
			.stream()
			.mapToLong((node) -> Long.parseLong(node.command("PTTL", key)))
			.sorted()
			.skip(nodes.size() / 2)
			.findFirst()
			.orElseThrow();
	}

	/**
	 * Waits until the key is gone from every node: a release returns once a quorum has
	 * deleted it, and the other nodes delete it a moment later, off the caller's thread;
	 * an expiry reaches each node at its own time.
	 * @param nodes the nodes
	 * @param key the key, with its prefix
	 */
	public static void awaitReleased(RedisNodes nodes, String key) {
		awaitTrue(key + " is gone from every node", () -> holding(nodes, key) == 0);
	}

	/**
	 * Polls the condition until it holds, failing after 5 s.
	 * @param what what is awaited, for the failure
	 * @param condition the condition
	 */
	public static void awaitTrue(String what, BooleanSupplier condition) {
		awaitTrue(what, TIMEOUT, condition);
	}

	/**
	 * Polls the condition until it holds, failing after the timeout.
	 * @param what what is awaited, for the failure
	 * @param timeout how long to wait at most
	 * @param condition the condition
	 */
	public static void awaitTrue(String what, Duration timeout, BooleanSupplier condition) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() - deadline > 0) {
				fail("not within " + timeout.toMillis() + " ms: " + what);
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
		}
	}

}
