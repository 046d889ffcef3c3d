package dev.redlock.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import dev.redlock.health.RedlockHealthIndicator;
import dev.redlock.core.Lease;
import dev.redlock.core.Redlock;
import dev.redlock.core.ReleaseOutcome;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Five masters, some with a wrong password in {@code redlock.nodes}: a minority is a
 * warning, as a node that is down is, and the application starts and locks on the others;
 * a quorum's worth fails startup naming them. The password shows nowhere.
 */
@WithRedisNodes(count = 5)
@ExtendWith(OutputCaptureExtension.class)
class AuthenticationFailureStartupTests {

	private static final String PASSWORD = "Locker-pw-9023";

	private static final String WRONG = "Wrong-pw-1187";

	// a node timeout of 1 s: the single attempt and the checks must hear from the nodes
	// within it on a loaded machine
	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RedlockAutoConfiguration.class))
		.withPropertyValues("redlock.restart-quarantine=0s", "redlock.node-timeout=1s");

	private RedisNodes nodes;

	@AfterEach
	void dropUsers() {
		for (RedisNode node : this.nodes.nodes()) {
			node.command("ACL", "DELUSER", "locker");
		}
	}

	@Test
	void aWrongPasswordOnOneNodeOfFiveStartsWarnsAndLocksOnTheOthers(RedisNodes nodes, CapturedOutput output) {
		this.runner.withPropertyValues(nodeProperties(nodes, 1)).run((context) -> {
			assertThat(context).hasNotFailed();
			Redlock redlock = context.getBean(Redlock.class);
			try (Lease lease = redlock.acquire("auth", Duration.ofSeconds(5), Duration.ZERO)) {
				assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
			}
			// a check does not wait for a connection still opening: poll until the node
			// with the wrong password has refused it (a connection that failed otherwise
			// is tried again after a back-off of 4 node timeouts)
			RedlockHealthIndicator indicator = new RedlockHealthIndicator(redlock);
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			Health health = indicator.health();
			while (!String.valueOf(nodeDetails(health).get(4).get("error")).contains("WRONGPASS")
					&& System.nanoTime() - deadline < 0) {
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
				health = indicator.health();
			}
			List<Map<String, Object>> details = nodeDetails(health);
			assertThat(details.get(4)).containsEntry("reachable", false);
			assertThat(details.get(4).get("error")).asString().contains("authentication failed", "WRONGPASS");
			assertThat(health.toString()).doesNotContain(WRONG, PASSWORD);
		});
		assertThat(output).contains("property 'redlock.nodes[4]'", "refuses our credentials", "WRONGPASS")
			.doesNotContain("refuses INFO", WRONG, PASSWORD);
	}

	@Test
	void wrongPasswordsOnAQuorumsWorthOfNodesFailStartupNamingThem(RedisNodes nodes, CapturedOutput output) {
		this.runner.withPropertyValues(nodeProperties(nodes, 3)).run((context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			InvalidRedlockPropertyException ex = null;
			for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
				if (cause instanceof InvalidRedlockPropertyException invalid) {
					ex = invalid;
				}
			}
			assertThat(ex).as("cause of " + failure).isNotNull();
			assertThat(ex.property()).isEqualTo("redlock.nodes");
			assertThat(ex.reason()).contains("nodes[2]", "nodes[3]", "nodes[4]", "refuse our credentials", "WRONGPASS")
				.doesNotContain(WRONG, PASSWORD);
		});
		assertThat(output).doesNotContain(WRONG, PASSWORD);
	}

	@SuppressWarnings("unchecked")
	private static List<Map<String, Object>> nodeDetails(Health health) {
		return (List<Map<String, Object>>) health.getDetails().get("nodes");
	}

	/** {@code redlock.nodes[i]}: the last {@code wrong} nodes with a wrong password. */
	private String[] nodeProperties(RedisNodes nodes, int wrong) {
		this.nodes = nodes;
		List<String> properties = new ArrayList<>();
		for (int i = 0; i < nodes.size(); i++) {
			RedisNode node = nodes.node(i);
			node.command("ACL", "SETUSER", "locker", "on", ">" + PASSWORD, "~*", "+@all");
			String password = (i < nodes.size() - wrong) ? PASSWORD : WRONG;
			properties
				.add("redlock.nodes[" + i + "]=redis://locker:" + password + "@" + node.host() + ":" + node.port());
		}
		return properties.toArray(String[]::new);
	}

}
