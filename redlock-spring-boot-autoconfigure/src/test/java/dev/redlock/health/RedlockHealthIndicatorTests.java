package dev.redlock.health;

import java.io.IOException;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import dev.redlock.DocumentedJson;
import dev.redlock.TestRedlocks;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockSettings;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The {@code redlock} health indicator against three real Redis nodes.
 */
@WithRedisNodes(count = 3)
class RedlockHealthIndicatorTests {

	/**
	 * Long enough for a healthy node to answer within it on a loaded machine, where it
	 * can be descheduled for hundreds of milliseconds: the exact counts below need every
	 * node that runs to answer in the one check.
	 */
	private static final Duration NODE_TIMEOUT = Duration.ofSeconds(1);

	/**
	 * Allowance on top of the node timeout for scheduling and parsing on a busy machine;
	 * with the node timeout, still below the 2 s a new connection is given to open, so a
	 * check that waited for one would be caught.
	 */
	private static final Duration MARGIN = Duration.ofMillis(900);

	private RedisNodes nodes;

	@AutoClose
	private Redlock redlock;

	private RedlockHealthIndicator indicator;

	@BeforeEach
	void buildRedlock(RedisNodes nodes) {
		this.nodes = nodes;
		this.redlock = TestRedlocks.on(nodes, TestRedlocks.SETTINGS.withNodeTimeout(NODE_TIMEOUT));
		this.indicator = new RedlockHealthIndicator(this.redlock);
		// a check does not wait for the first connections: wait until every node has one,
		// so that the checks below see what the test did, not a connection still opening
		awaitHealth((health) -> Integer.valueOf(3).equals(health.getDetails().get("reachable")), Duration.ofSeconds(5));
	}

	@Test
	void outOfServiceWhileAQuorumAnswersOnlyCountingNodesInRestartQuarantine() {
		// 3 s: both restarted nodes must be seen again within it of each other, on a
		// loaded machine too
		Duration quarantine = Duration.ofSeconds(3);
		// checks are polled here, so a short node timeout costs nothing; it keeps the
		// back-off after the restarts' refused connections short (4 node timeouts)
		RedlockSettings settings = RedlockSettings.defaults()
			.withNodeTimeout(Duration.ofMillis(200))
			.withDefaultTtl(quarantine)
			.withRestartQuarantine(quarantine);
		try (Redlock quarantining = TestRedlocks.on(this.nodes, settings)) {
			this.indicator = new RedlockHealthIndicator(quarantining);
			// the kit's nodes may have been started moments ago: wait until every one of
			// them counts
			awaitHealth((health) -> Integer.valueOf(3).equals(health.getDetails().get("counting")),
					quarantine.plusSeconds(5));
			this.nodes.node(0).restart();
			this.nodes.node(1).restart();

			// a restarted node's quarantine starts when it is seen again, so waiting for
			// both takes nothing from it
			Health outOfService = awaitHealth(
					(health) -> Integer.valueOf(3).equals(health.getDetails().get("reachable")), Duration.ofSeconds(5));
			assertThat(outOfService.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
			assertThat(outOfService.getDetails()).containsEntry("quorum", 2).containsEntry("counting", 1);
			assertThat(outOfService.getDetails().get("reason")).asString()
				.contains("2 of 3 nodes are in quarantine (restart) and a lock needs 2",
						"no lock can be acquired for another", "redlock.restart-quarantine=0s");
			List<Map<String, Object>> details = nodeDetails(outOfService);
			for (int restarted : new int[] { 0, 1 }) {
				assertThat(details.get(restarted).get("quarantineRemainingMs")).isInstanceOfSatisfying(Long.class,
						(left) -> assertThat(left).isPositive().isLessThanOrEqualTo(quarantine.toMillis()));
			}
			assertThat(details.get(2)).doesNotContainKey("quarantineRemainingMs");

			// the two quarantines end a moment apart: UP comes with the first, all three
			// count after the second
			Health up = awaitHealth((health) -> Integer.valueOf(3).equals(health.getDetails().get("counting")),
					quarantine.plusSeconds(2));
			assertThat(up.getStatus()).isEqualTo(Status.UP);
			assertThat(nodeDetails(up))
				.allSatisfy((node) -> assertThat(node).doesNotContainKey("quarantineRemainingMs"));
		}
	}

	@Test
	void upWithEveryNodeAndDetailsPerNode() {
		Health health = this.indicator.health();
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsEntry("quorum", 2)
			.containsEntry("reachable", 3)
			.containsEntry("counting", 3);
		List<Map<String, Object>> details = nodeDetails(health);
		assertThat(details).hasSize(3);
		for (int i = 0; i < 3; i++) {
			Map<String, Object> node = details.get(i);
			assertThat(node).containsEntry("node", this.nodes.node(i).uri())
				.containsEntry("reachable", true)
				.containsEntry("role", "master")
				.containsKeys("latencyMs", "version", "lockCommands", "uptimeSeconds")
				.doesNotContainKeys("error", "problem");
			assertThat(node.get("latencyMs")).isInstanceOfSatisfying(BigDecimal.class, (latency) -> assertThat(latency)
				.isBetween(BigDecimal.ZERO, BigDecimal.valueOf(NODE_TIMEOUT.toMillis())));
			assertThat((String) node.get("version")).matches("(valkey )?\\d+\\.\\d+\\.\\d+");
			assertThat(node.get("lockCommands")).isIn("scripts", "delex", "delifeq");
			assertThat(node.get("uptimeSeconds")).isInstanceOfSatisfying(Long.class,
					(uptime) -> assertThat(uptime).isNotNegative());
		}
	}

	@Test
	void theObservabilityPagesExampleShowsOnlyFieldsAHealthCheckGives() throws IOException {
		this.nodes.node(2).kill();
		Health health = awaitHealth((answer) -> Integer.valueOf(2).equals(answer.getDetails().get("reachable")),
				Duration.ofSeconds(5));
		Set<String> given = new TreeSet<>(Set.of("redlock", "status", "details"));
		given.addAll(health.getDetails().keySet());
		nodeDetails(health).forEach((node) -> given.addAll(node.keySet()));
		assertThat(nodeDetails(health).get(2)).containsKey("error");
		assertThat(given).containsAll(DocumentedJson.fields("docs/observability.md", "\"counting\""));
	}

	@Test
	void downWhenAMajorityIsKilledAndUpAgainAfterRestart() {
		// a node that refused a connection is left alone for a back-off of 4 node
		// timeouts: a short node timeout keeps the wait for the restarted nodes short,
		// and costs nothing else, as these checks are polled
		try (Redlock quick = TestRedlocks.on(this.nodes,
				TestRedlocks.SETTINGS.withNodeTimeout(Duration.ofMillis(250)))) {
			this.indicator = new RedlockHealthIndicator(quick);
			awaitHealth((health) -> Integer.valueOf(3).equals(health.getDetails().get("reachable")),
					Duration.ofSeconds(5));
			this.nodes.node(0).kill();
			this.nodes.node(2).kill();
			Health down = awaitHealth((health) -> Integer.valueOf(1).equals(health.getDetails().get("reachable")),
					Duration.ofSeconds(5));
			assertThat(down.getStatus()).isEqualTo(Status.DOWN);
			assertThat(down.getDetails()).containsEntry("quorum", 2).containsEntry("reachable", 1);
			List<Map<String, Object>> details = nodeDetails(down);
			for (int killed : new int[] { 0, 2 }) {
				assertThat(details.get(killed)).containsEntry("node", this.nodes.node(killed).uri())
					.containsEntry("reachable", false)
					.containsKeys("error", "latencyMs")
					.doesNotContainKeys("version", "lockCommands", "role", "uptimeSeconds");
			}
			assertThat(details.get(1)).containsEntry("reachable", true);

			this.nodes.node(0).restart();
			this.nodes.node(2).restart();
			Health up = awaitHealth((health) -> Integer.valueOf(3).equals(health.getDetails().get("reachable")),
					Duration.ofSeconds(5));
			assertThat(up.getStatus()).isEqualTo(Status.UP);
		}
	}

	@Test
	void pausedNodeIsUnreachableAndTheCheckReturnsWithinTheNodeTimeout() {
		// every node has a connection (see buildRedlock): the frozen node gets a request
		RedisNode frozen = this.nodes.node(1);
		frozen.pause();
		Health health;
		try {
			health = timedHealth(this.indicator);
		}
		finally {
			frozen.resume();
		}
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsEntry("reachable", 2);
		assertThat(nodeDetails(health).get(1)).containsEntry("node", frozen.uri())
			.containsEntry("reachable", false)
			.containsEntry("error", "timeout");
	}

	@Test
	void pausedNodeWithoutAnOpenConnectionDoesNotHoldUpTheCheck() {
		RedisNode frozen = this.nodes.node(0);
		frozen.pause();
		Health health;
		// built while the node is frozen: its first connection cannot open
		try (Redlock cold = TestRedlocks.on(this.nodes, TestRedlocks.SETTINGS.withNodeTimeout(NODE_TIMEOUT))) {
			health = timedHealth(new RedlockHealthIndicator(cold));
		}
		finally {
			frozen.resume();
		}
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(nodeDetails(health).get(0)).containsEntry("reachable", false).containsKey("error");
	}

	@Test
	void replicaListedAsANodeIsAMisconfigurationAndDoesNotCountTowardsTheQuorum() {
		RedisNode replica = this.nodes.node(2);
		replica.command("REPLICAOF", "127.0.0.1", String.valueOf(this.nodes.node(0).port()));
		try {
			Health health = this.indicator.health();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsEntry("reachable", 2);
			Map<String, Object> node = nodeDetails(health).get(2);
			assertThat(node).containsEntry("reachable", true).containsEntry("role", "slave");
			assertThat((String) node.get("problem")).contains("misconfiguration", "not a master");

			this.nodes.node(1).kill();
			Health withoutSecondMaster = this.indicator.health();
			assertThat(withoutSecondMaster.getStatus()).isEqualTo(Status.DOWN);
			assertThat(withoutSecondMaster.getDetails()).containsEntry("reachable", 1);
			assertThat(nodeDetails(withoutSecondMaster).get(2)).containsEntry("reachable", true).containsKey("problem");
		}
		finally {
			replica.command("REPLICAOF", "NO", "ONE");
		}
	}

	private Health awaitHealth(Predicate<Health> condition, Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		Health health = this.indicator.health();
		while (!condition.test(health)) {
			if (System.nanoTime() - deadline > 0) {
				fail("Health did not reach the expected state within %s; last: %s", timeout, health);
			}
			health = this.indicator.health();
		}
		return health;
	}

	/**
	 * Checks the health, asserting that the check returns within the node timeout.
	 */
	private static Health timedHealth(RedlockHealthIndicator indicator) {
		long start = System.nanoTime();
		Health health = indicator.health();
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(NODE_TIMEOUT.plus(MARGIN));
		return health;
	}

	@SuppressWarnings("unchecked")
	private static List<Map<String, Object>> nodeDetails(Health health) {
		return (List<Map<String, Object>>) health.getDetails().get("nodes");
	}

}
