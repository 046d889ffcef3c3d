package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;

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
class ShardedVoterGuardsTests {

	private static final Duration QUARANTINE = Duration.ofSeconds(2);

	private static final RedlockSettings SETTINGS = TestSupport.withQuarantine(QUARANTINE);

	private static final String ON_SHARD_0 = ShardedVoterTests.resourceOnShard(0);

	private static final String ON_SHARD_1 = ShardedVoterTests.resourceOnShard(1);

	private static RedisNodes nodes;

	@BeforeAll
	static void startNodes() {
		nodes = RedisNodes.startWithSteppableClocks(6);
	}

	@AfterAll
	static void stopNodes() {
		nodes.close();
	}

	@Test
	void aShardNodeInQuarantineCostsItsVoterOnlyTheKeysOfItsShard() {
		try (Redlock redlock = counting()) {
			// shard 0 of voters 0 and 1 lose their data: each is quarantined
			node(0, 0).command("FLUSHALL");
			node(1, 0).command("FLUSHALL");
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
	 * Both nodes of voter 0 step their clocks a minute forward. A probe reads all six
	 * clocks: two faulty clocks are one faulty voter, so the four others are the honest
	 * majority and clear each other; counted as two faulty voters of three, the stepped
	 * pair outvoted the honest clocks and every node was taken for off.
	 */
	@Test
	void twoSteppedClocksOfOneVoterAreOneFaultyVoter() {
		try (Redlock redlock = counting()) {
			node(0, 0).stepClock(Duration.ofSeconds(60));
			node(0, 1).stepClock(Duration.ofSeconds(60));
			TestSupport.awaitTrue("voter 0's nodes found off by the probe", QUARANTINE.plusSeconds(10),
					() -> redlock.checkNodes().get(0).quarantineReason() == QuarantineReason.CLOCK_STEP
							&& redlock.checkNodes().get(1).quarantineReason() == QuarantineReason.CLOCK_STEP);
			// two more probes (a quarter of the quarantine apart, at least a second)
			long until = System.nanoTime() + Duration.ofSeconds(2).toNanos();
			while (System.nanoTime() - until < 0) {
				for (int node = 2; node < 6; node++) {
					NodeStatus status = redlock.checkNodes().get(node);
					assertThat(status.counts()).as("honest node %d: %s", node, status).isTrue();
				}
				assertThat(redlock.tryAcquire(ON_SHARD_0, QUARANTINE)).as("shard 0 on voters 1 and 2")
					.hasValueSatisfying(Lease::release);
				assertThat(redlock.tryAcquire(ON_SHARD_1, QUARANTINE)).as("shard 1 on voters 1 and 2")
					.hasValueSatisfying(Lease::release);
			}
		}
		finally {
			node(0, 0).stepClock(Duration.ofSeconds(-60));
			node(0, 1).stepClock(Duration.ofSeconds(-60));
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
	void aShardThatForgotIsReseededOnlyFromTheNodesOfItsSlots() {
		String resource = ON_SHARD_0;
		long token;
		try (Redlock a = counting()) {
			try (Lease lease = a.acquire(LockRequest.of(resource, QUARANTINE).fenced(), Duration.ofSeconds(10))) {
				token = lease.fencingToken().orElseThrow();
			}
		}
		TestSupport.awaitTrue("the lock key is gone from every node", Duration.ofSeconds(5),
				() -> TestSupport.nodesWithKey(nodes, TestSupport.PREFIX + resource) == 0);
		node(0, 0).command("FLUSHALL");
		List<String> uris = new ArrayList<>(nodes.uris());
		for (int voter = 1; voter <= 2; voter++) {
			LatencyProxy cut = LatencyProxy.to(node(voter, 0), Duration.ZERO);
			uris.set(voter * 2, cut.uri());
			cut.close();
		}
		try (Redlock c = ShardedVoterTests.sharded(uris, SETTINGS)) {
			TestSupport.awaitTrue("C tried to re-seed voter 0's shard 0", QUARANTINE.plusSeconds(10),
					() -> c.internals().group().reseed().attempts() >= 1);
			assertThat(ForgetfulNodes.trustedCounter(node(0, 0), resource)).as("its counter, if trusted")
				.satisfiesAnyOf((count) -> assertThat(count).isEqualTo(ForgetfulNodes.UNTRUSTED),
						(count) -> assertThat(count).isGreaterThanOrEqualTo(token));
		}
		try (Redlock d = ShardedVoterTests.sharded(nodes.uris(), SETTINGS)) {
			TestSupport.awaitTrue("D re-seeded voter 0's shard 0", QUARANTINE.plusSeconds(10),
					() -> ForgetfulNodes.trustedCounter(node(0, 0), resource) != ForgetfulNodes.UNTRUSTED);
			assertThat(ForgetfulNodes.trustedCounter(node(0, 0), resource)).isGreaterThanOrEqualTo(token);
			ForgetfulNodes.awaitCounting(d);
			try (Lease lease = d.acquire(LockRequest.of(resource, QUARANTINE).fenced(), Duration.ofSeconds(10))) {
				assertThat(lease.fencingToken().orElseThrow()).isGreaterThan(token);
			}
		}
	}

	/** A sharded Redlock over every node, once it counts them all. */
	private static Redlock counting() {
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

	private static RedisNode node(int voter, int shard) {
		return ShardedVoterTests.node(nodes, voter, shard);
	}

}
