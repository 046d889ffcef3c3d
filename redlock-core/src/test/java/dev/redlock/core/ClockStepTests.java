package dev.redlock.core;

import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import dev.redlock.test.RedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A node's wall clock steps forward while it holds a lock on a bare quorum: Redis expires
 * keys by that clock, so A's key is gone there at once, without restart. B must get no
 * quorum while A's lease is valid, whether B met the node before the step or only after
 * it: either way the node's clock stands far ahead of the other nodes' in B's round. Five
 * nodes on the embedded Redis binary under libfaketime: run where Debian's
 * {@code faketime} package is installed (the Maven profile {@code steppable-clock}; CI
 * installs it).
 */
@Tag("steppable-clock")
class ClockStepTests {

	private static final Duration QUARANTINE = Duration.ofSeconds(3);

	private static final RedlockSettings SETTINGS = TestSupport.withQuarantine(QUARANTINE);

	private static final String RESOURCE = "stepped";

	private static RedisNodes nodes;

	@BeforeAll
	static void startNodes() {
		nodes = RedisNodes.startWithSteppableClocks(5);
	}

	@AfterAll
	static void stopNodes() {
		nodes.close();
	}

	@Test
	void aClockSteppedForwardOnOneOfTheHoldersNodesGivesNoSecondHolder() {
		try (ForgetfulNodes scenario = new ForgetfulNodes(nodes, nodes.uris(), SETTINGS);
				Redlock warm = TestSupport.redlock(nodes, SETTINGS)) {
			ForgetfulNodes.awaitCounting(scenario.holder(), warm);
			Lease first = scenario.acquiredOnNodes012(RESOURCE);
			nodes.node(2).stepClock(Duration.ofSeconds(120));
			TestSupport.awaitTrue("A's key expired on the stepped node", Duration.ofSeconds(5),
					() -> nodes.node(2).command("GET", TestSupport.PREFIX + RESOURCE) == null);

			int attempts = ForgetfulNodes.refusedWhileValid(first, warm, RESOURCE, Duration.ofMillis(500));
			NodeStatus stepped = warm.checkNodes().get(2);
			assertThat(stepped.quarantineReason()).isEqualTo(QuarantineReason.CLOCK_STEP);
			assertThat(stepped.counts()).isFalse();

			// a client that meets the node only now compares its clock with the others'
			try (Redlock fresh = TestSupport.redlock(nodes, SETTINGS)) {
				attempts += ForgetfulNodes.refusedWhileValid(first, fresh, RESOURCE, Duration.ofMillis(500));
				assertThat(fresh.checkNodes().get(2).quarantineReason()).isEqualTo(QuarantineReason.CLOCK_STEP);
			}
			assertThat(attempts).isPositive();
			first.release();
		}
		finally {
			nodes.node(2).stepClock(Duration.ofSeconds(-120));
		}
	}

}
