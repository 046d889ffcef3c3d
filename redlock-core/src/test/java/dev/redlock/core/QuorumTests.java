package dev.redlock.core;

import java.time.Duration;
import java.util.Objects;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.redlock.core.internal.round.NodeReply;
import dev.redlock.core.internal.round.Quorum;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The majority rule: every one of the 32 ways a foreign holder can occupy 5 nodes (the
 * lock is acquired iff at least 3 nodes are free, foreign values are never touched, and a
 * failed attempt leaves nothing behind), and the {@link Quorum} arithmetic for every
 * group size up to 9.
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

	@Nested
	class Rule {

		@ParameterizedTest
		@ValueSource(ints = { 1, 2, 3, 4, 5, 6, 7, 8, 9 })
		void anyTwoQuorumsShareANodeAndTheRestIsTolerated(int nodes) {
			Quorum quorum = new Quorum(nodes);
			assertThat(2 * quorum.size()).as("two quorums overlap").isGreaterThan(nodes);
			assertThat(2 * (quorum.size() - 1)).as("one node fewer would not").isLessThanOrEqualTo(nodes);
			assertThat(quorum.tolerated()).isEqualTo(nodes - quorum.size());
			assertThat(quorum.denying()).isEqualTo(quorum.tolerated() + 1);
			assertThat(Quorum.toleratedOf(nodes)).as("a round's minority").isEqualTo(quorum.tolerated());
			for (int agreeing = 0; agreeing <= nodes; agreeing++) {
				assertThat(quorum.reached(agreeing)).as("%d of %d agree", agreeing, nodes)
					.isEqualTo(agreeing >= nodes / 2 + 1);
				int refusing = agreeing;
				assertThat(quorum.lost(refusing)).as("%d of %d refuse", refusing, nodes)
					.isEqualTo(nodes - refusing < quorum.size());
			}
		}

		@Test
		void aRoundIsSettledOnceAQuorumAgreesOrNoQuorumIsLeft() {
			Quorum quorum = new Quorum(5);
			// one vote per node by the reply's value: 1 agrees, 0 refuses, null not yet
			Quorum.Vote vote = (reply) -> (reply.value() == null) ? Quorum.Vote.NOT_YET
					: ((Long) reply.value() == 1L) ? Quorum.Vote.AGREES : Quorum.Vote.REFUSES;
			assertThat(quorum.settledBy(replies(1L, 1L, null, null, null), vote)).isFalse();
			assertThat(quorum.settledBy(replies(1L, 1L, 1L, null, null), vote)).isTrue();
			assertThat(quorum.settledBy(replies(0L, 0L, 1L, 1L, null), vote)).isFalse();
			assertThat(quorum.settledBy(replies(0L, 0L, 0L, 1L, null), vote)).isTrue();
			// nodes not read yet count neither way
			assertThat(quorum.settledBy(new NodeReply[] { null, null, null, null, null }, vote)).isFalse();
			assertThat(quorum.agreeing(replies(1L, 0L, null, 1L, 1L), vote)).isEqualTo(3);
		}

		private NodeReply[] replies(Long... values) {
			NodeReply[] replies = new NodeReply[values.length];
			for (int i = 0; i < values.length; i++) {
				replies[i] = NodeReply.replied(i, values[i], 0);
			}
			return replies;
		}

		@Test
		void aGroupWithoutNodesIsRefused() {
			assertThatIllegalArgumentException().isThrownBy(() -> new Quorum(0)).withMessageContaining("at least one");
		}

	}

}
