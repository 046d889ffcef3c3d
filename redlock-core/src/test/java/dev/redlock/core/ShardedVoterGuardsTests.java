package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.protocol.ClusterKeys;
import dev.redlock.core.internal.protocol.HashSlot;
import dev.redlock.core.internal.protocol.KeyLayout;
import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static dev.redlock.core.ShardedVoterTests.node;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The guards against forgetful nodes with voters of several shard nodes (three voters of
 * two standalone masters, as in {@link ShardedVoterTests}), the restart quarantine on:
 * they count voters, each by its node that serves a key's slot. A shard node in
 * quarantine costs its voter that shard's keys only; two clocks of one voter that step at
 * once are the fault of one voter, not of two; a shard node that forgot its fencing
 * counters is re-seeded only from the nodes of the other voters that serve its slots.
 * Nodes whose clocks can be stepped (libfaketime); node {@code 2 v + s} is voter
 * {@code v}'s shard {@code s}.
 */
@WithRedisNodes(count = 6)
class ShardedVoterGuardsTests {

	/** The marker key of the nodes that serve the first half of the slots. */
	private static final String SHARD_0_MARKER = KeyLayout.TAGGED.markerKey(0, HashSlot.SLOTS / 2 - 1);

	static final Duration QUARANTINE = Duration.ofSeconds(2);

	static final RedlockSettings SETTINGS = TestSupport.withQuarantine(QUARANTINE);

	static final String ON_SHARD_0 = ShardedVoterTests.resourceOnShard(0);

	static final String ON_SHARD_1 = ShardedVoterTests.resourceOnShard(1);

	@Test
	void aShardNodeInQuarantineCostsItsVoterOnlyTheKeysOfItsShard(RedisNodes nodes) {
		try (Redlock redlock = counting(nodes)) {
			// shard 0 of voters 0 and 1 lose their data: each is quarantined
			node(nodes, 0, 0).command("FLUSHALL");
			node(nodes, 1, 0).command("FLUSHALL");
			TestSupport.awaitTrue("both flushed nodes in quarantine", QUARANTINE.plusSeconds(10),
					() -> !redlock.checkNodes().get(0).counts() && !redlock.checkNodes().get(2).counts());
			assertThat(redlock.tryAcquire(ON_SHARD_0, QUARANTINE)).as("shard 0: only voter 2 counts, no quorum")
				.isEmpty();
			assertThat(redlock.tryAcquire(ON_SHARD_1, QUARANTINE)).as("shard 1: every voter counts")
				.hasValueSatisfying(Lease::release);
			ForgetfulNodes.awaitCounting(redlock);
			assertThat(redlock.tryAcquire(ON_SHARD_0, QUARANTINE)).as("shard 0 once the quarantines ended")
				.hasValueSatisfying(Lease::release);
		}
	}

	/**
	 * Voter 0's shard 0 forgets (FLUSHALL) after a fenced lock of its slots; a client
	 * that cannot reach shard 0 of voters 1 and 2 (the only other nodes that hold the
	 * lock's counter) must not re-seed it from the shard 1 nodes it reaches, which hold
	 * none of its counters: seen re-seeded from them, counting from 0, before the re-seed
	 * counted voters. A client that reaches every node re-seeds it at or above the token.
	 */
	@Test
	void aShardThatForgotIsReseededOnlyFromTheNodesOfItsSlots(RedisNodes nodes) {
		String resource = ON_SHARD_0;
		long token;
		try (Redlock a = counting(nodes)) {
			try (Lease lease = a.acquire(LockRequest.of(resource, QUARANTINE).fenced(), Duration.ofSeconds(10))) {
				token = lease.fencingToken().orElseThrow();
			}
		}
		TestSupport.awaitTrue("the lock key is gone from every node", Duration.ofSeconds(5),
				() -> TestSupport.nodesWithKey(nodes, ClusterKeys.lockKey(TestSupport.PREFIX + resource)) == 0);
		node(nodes, 0, 0).command("FLUSHALL");
		List<String> uris = new ArrayList<>(nodes.uris());
		for (int voter = 1; voter <= 2; voter++) {
			LatencyProxy cut = LatencyProxy.to(node(nodes, voter, 0), Duration.ZERO);
			uris.set(voter * 2, cut.uri());
			cut.close();
		}
		try (Redlock c = ShardedVoterTests.sharded(uris, SETTINGS)) {
			TestSupport.awaitTrue("C tried to re-seed voter 0's shard 0", QUARANTINE.plusSeconds(10),
					() -> c.internals().group().reseed().attempts() >= 1);
			assertThat(ForgetfulNodes.trustedCounter(node(nodes, 0, 0), resource, KeyLayout.TAGGED, SHARD_0_MARKER))
				.as("its counter, if trusted")
				.satisfiesAnyOf((count) -> assertThat(count).isEqualTo(ForgetfulNodes.UNTRUSTED),
						(count) -> assertThat(count).isGreaterThanOrEqualTo(token));
		}
		try (Redlock d = ShardedVoterTests.sharded(nodes.uris(), SETTINGS)) {
			TestSupport.awaitTrue("D re-seeded voter 0's shard 0", QUARANTINE.plusSeconds(10),
					() -> ForgetfulNodes.trustedCounter(node(nodes, 0, 0), resource, KeyLayout.TAGGED,
							SHARD_0_MARKER) != ForgetfulNodes.UNTRUSTED);
			assertThat(ForgetfulNodes.trustedCounter(node(nodes, 0, 0), resource, KeyLayout.TAGGED, SHARD_0_MARKER))
				.isGreaterThanOrEqualTo(token);
			ForgetfulNodes.awaitCounting(d);
			try (Lease lease = d.acquire(LockRequest.of(resource, QUARANTINE).fenced(), Duration.ofSeconds(10))) {
				assertThat(lease.fencingToken().orElseThrow()).isGreaterThan(token);
			}
		}
	}

	/** A sharded Redlock over every node, once it counts them all. */
	static Redlock counting(RedisNodes nodes) {
		Redlock redlock = ShardedVoterTests.sharded(nodes.uris(), SETTINGS);
		try {
			ForgetfulNodes.awaitCounting(redlock);
		}
		catch (RuntimeException | AssertionError ex) {
			redlock.close();
			throw ex;
		}
		return redlock;
	}

}
