package dev.redlock.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.redlock.core.Redlock;
import dev.redlock.health.RedlockHealthIndicator;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.SentinelManagedMaster;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Sentinel voter in {@code redlock.nodes}, beside two standalone masters: given as one
 * comma-separated value (which binding splits at every comma, the sentinels' included),
 * it is one voter; health shows its kind and its master; sentinels with a user and
 * password of their own are reached with {@code redlock.sentinel.*}; a master name its
 * sentinels do not know fails startup naming the voter.
 */
@WithRedisNodes(count = 2)
class SentinelVoterConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RedlockAutoConfiguration.class))
		// a healthy node answers within 1 s on a loaded machine too
		.withPropertyValues("redlock.restart-quarantine=0s", "redlock.node-timeout=1s");

	@Test
	void aSentinelVoterInACommaSeparatedValueIsOneVoterAndHealthShowsItsMaster(RedisNodes nodes) {
		try (SentinelManagedMaster voter = SentinelManagedMaster.start("payments", 1, 2)) {
			String value = String.join(",", voter.uri(), nodes.node(0).uri(), nodes.node(1).uri());
			this.runner.withPropertyValues("redlock.nodes=" + value).run((context) -> {
				assertThat(context).hasNotFailed();
				Redlock redlock = context.getBean(Redlock.class);
				assertThat(redlock.nodeAddresses()).containsExactly(voter.uri(), nodes.node(0).uri(),
						nodes.node(1).uri());
				assertThat(redlock.quorum()).isEqualTo(2);
				Health health = healthWithEveryNodeReachable(new RedlockHealthIndicator(redlock));
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				@SuppressWarnings("unchecked")
				List<Map<String, Object>> details = (List<Map<String, Object>>) health.getDetails().get("nodes");
				assertThat(details.get(0)).containsEntry("kind", "sentinel")
					.containsEntry("master", "127.0.0.1:" + voter.master().port())
					.containsEntry("role", "master");
				assertThat(details.get(1)).containsEntry("kind", "standalone")
					.containsEntry("master", "127.0.0.1:" + nodes.node(0).port());
				redlock.tryAcquire("sentinel-voter", Duration.ofSeconds(5)).orElseThrow().release();
			});
		}
	}

	@Test
	void sentinelsWithAPasswordOfTheirOwnAreReachedWithTheSentinelProperties(RedisNodes nodes) {
		try (SentinelManagedMaster voter = SentinelManagedMaster.start("payments", 1, 1)) {
			voter.sentinels()
				.get(0)
				.command("ACL", "SETUSER", "watcher", "on", ">sentinel-s3cret", "+@all", "~*", "&*");
			voter.sentinels().get(0).command("ACL", "SETUSER", "default", "off");
			this.runner
				.withPropertyValues("redlock.nodes[0]=" + voter.uri(), "redlock.nodes[1]=" + nodes.node(0).uri(),
						"redlock.nodes[2]=" + nodes.node(1).uri(), "redlock.sentinel.username=watcher",
						"redlock.sentinel.password=sentinel-s3cret")
				.run((context) -> {
					assertThat(context).hasNotFailed();
					assertThat(context.getBean(RedlockProperties.class).toString()).doesNotContain("sentinel-s3cret");
					Redlock redlock = context.getBean(Redlock.class);
					Health health = healthWithEveryNodeReachable(new RedlockHealthIndicator(redlock));
					assertThat(health.getStatus()).isEqualTo(Status.UP);
					@SuppressWarnings("unchecked")
					List<Map<String, Object>> details = (List<Map<String, Object>>) health.getDetails().get("nodes");
					assertThat(details.get(0)).as("the Sentinel voter").containsEntry("reachable", true);
					assertThat(health.toString()).doesNotContain("sentinel-s3cret");
					redlock.tryAcquire("sentinel-password", Duration.ofSeconds(5)).orElseThrow().release();
				});
		}
	}

	@Test
	void aMasterNameTheSentinelsDoNotKnowFailsStartupNamingTheVoter(RedisNodes nodes) {
		try (SentinelManagedMaster voter = SentinelManagedMaster.start("payments", 1, 1)) {
			String misspelt = voter.uri().replace("#payments", "#paymnets");
			this.runner
				.withPropertyValues("redlock.nodes[0]=" + nodes.node(0).uri(), "redlock.nodes[1]=" + misspelt,
						"redlock.nodes[2]=" + nodes.node(1).uri())
				.run((context) -> {
					assertThat(context).hasFailed();
					InvalidRedlockPropertyException ex = findCause(context.getStartupFailure());
					assertThat(ex.property()).isEqualTo("redlock.nodes[1]");
					assertThat(ex.reason()).contains("#paymnets", "no master named 'paymnets'");
				});
		}
	}

	/**
	 * Health once a check found every node reachable: on a loaded machine one check may
	 * miss a node's answer within the node timeout.
	 */
	private static Health healthWithEveryNodeReachable(RedlockHealthIndicator indicator) {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (true) {
			Health health = indicator.health();
			if (Integer.valueOf(3).equals(health.getDetails().get("reachable")) || System.nanoTime() - deadline > 0) {
				return health;
			}
		}
	}

	private static InvalidRedlockPropertyException findCause(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof InvalidRedlockPropertyException invalid) {
				return invalid;
			}
		}
		throw new AssertionError("no InvalidRedlockPropertyException in " + failure, failure);
	}

}
