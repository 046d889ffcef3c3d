package dev.redlock.core;

import java.time.Duration;
import java.util.Objects;

import org.junit.jupiter.api.Test;

import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every one of the 32 ways a foreign holder can occupy 5 nodes: the lock is acquired iff
 * at least 3 nodes are free, foreign values are never touched, and a failed attempt
 * leaves nothing behind.
 */
@WithRedisNodes(count = 5)
class QuorumTests {

	private static final String RESOURCE = "quorum";

	private static final String KEY = TestSupport.PREFIX + RESOURCE;

	@Test
	void acquiredIffAMajorityIsFree(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS)) {
			for (int taken = 0; taken < 32; taken++) {
				for (RedisNode node : nodes.nodes()) {
					node.command("FLUSHALL");
				}
				for (int i = 0; i < 5; i++) {
					if (isTaken(taken, i)) {
						nodes.node(i).command("SET", KEY, "foreign", "PX", "60000");
					}
				}
				int free = 5 - Integer.bitCount(taken);
				Lease lease = redlock.tryAcquire(RESOURCE, Duration.ofSeconds(10)).orElse(null);

				assertThat(lease != null)
					.as("acquired with %d free nodes (mask %s)", free, Integer.toBinaryString(taken))
					.isEqualTo(free >= 3);
				int ours = 0;
				for (int i = 0; i < 5; i++) {
					RedisNode node = nodes.node(i);
					String value = node.command("GET", KEY);
					if (isTaken(taken, i)) {
						assertThat(value).as("foreign value on node %d", i).isEqualTo("foreign");
					}
					else if (lease != null) {
						// a round returns on a quorum: a slower node gets our value a
						// moment later, or never if its connection was not ready in time
						assertThat(value).as("our value or none on node %d", i).isNotEqualTo("foreign");
						ours += (value != null) ? 1 : 0;
					}
					else {
						// a lost round's values are removed off the caller's thread
						TestSupport.awaitTrue("nothing left on free node " + i, Duration.ofSeconds(5),
								() -> node.command("GET", KEY) == null);
					}
				}
				if (lease != null) {
					assertThat(ours).as("nodes holding our value").isGreaterThanOrEqualTo(3);
				}
				if (lease != null) {
					assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
					for (int i = 0; i < 5; i++) {
						RedisNode node = nodes.node(i);
						String expected = isTaken(taken, i) ? "foreign" : null;
						TestSupport.awaitTrue("node " + i + " holds " + expected + " after the release",
								Duration.ofSeconds(5), () -> Objects.equals(node.command("GET", KEY), expected));
					}
				}
			}
		}
	}

	private static boolean isTaken(int mask, int node) {
		return (mask & (1 << node)) != 0;
	}

}
