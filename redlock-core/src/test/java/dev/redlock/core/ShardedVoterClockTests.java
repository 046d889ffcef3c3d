package dev.redlock.core;

import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import dev.redlock.test.RedisNodes;

import static dev.redlock.core.ShardedVoterGuardsTests.ON_SHARD_0;
import static dev.redlock.core.ShardedVoterGuardsTests.ON_SHARD_1;
import static dev.redlock.core.ShardedVoterGuardsTests.QUARANTINE;
import static dev.redlock.core.ShardedVoterTests.node;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The probe's clock check with voters of several shard nodes (three voters of two, as in
 * {@link ShardedVoterGuardsTests}), the restart quarantine on: two clocks of one voter
 * that step at once are the fault of one voter, not of two. Six nodes on the embedded
 * Redis binary under libfaketime: run where Debian's {@code faketime} package is
 * installed (the Maven profile {@code steppable-clock}; CI installs it).
 */
@Tag("steppable-clock")
class ShardedVoterClockTests {

	private static RedisNodes nodes;

	@BeforeAll
	static void startNodes() {
		nodes = RedisNodes.startWithSteppableClocks(6);
	}

	@AfterAll
	static void stopNodes() {
		nodes.close();
	}

	/**
	 * Both nodes of voter 0 step their clocks a minute forward. A probe reads all six
	 * clocks: two faulty clocks are one faulty voter, so the four others are the honest
	 * majority and clear each other; counted as two faulty voters of three, the stepped
	 * pair outvoted the honest clocks and every node was taken for off.
	 */
	@Test
	void twoSteppedClocksOfOneVoterAreOneFaultyVoter() {
		try (Redlock redlock = ShardedVoterGuardsTests.counting(nodes)) {
			node(nodes, 0, 0).stepClock(Duration.ofSeconds(60));
			node(nodes, 0, 1).stepClock(Duration.ofSeconds(60));
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
			node(nodes, 0, 0).stepClock(Duration.ofSeconds(-60));
			node(nodes, 0, 1).stepClock(Duration.ofSeconds(-60));
		}
	}

}
