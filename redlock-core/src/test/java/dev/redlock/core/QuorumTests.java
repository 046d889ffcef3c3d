package dev.redlock.core;

import java.time.Duration;

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
				for (int i = 0; i < 5; i++) {
					String value = nodes.node(i).command("GET", KEY);
					if (isTaken(taken, i)) {
						assertThat(value).as("foreign value on node %d", i).isEqualTo("foreign");
					}
					else if (lease != null) {
						assertThat(value).as("our value on node %d", i).isNotNull().isNotEqualTo("foreign");
					}
					else {
						assertThat(value).as("nothing left on free node %d", i).isNull();
					}
				}
				if (lease != null) {
					assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
					for (int i = 0; i < 5; i++) {
						assertThat(nodes.node(i).command("GET", KEY)).isEqualTo(isTaken(taken, i) ? "foreign" : null);
					}
				}
			}
		}
	}

	private static boolean isTaken(int mask, int node) {
		return (mask & (1 << node)) != 0;
	}

}
