package dev.redlock.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import dev.redlock.core.Redlock;
import dev.redlock.health.RedlockHealthIndicator;
import dev.redlock.test.RedisCluster;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A cluster voter in {@code redlock.nodes}, beside two standalone masters: given in one
 * comma-separated value (which binding splits at every comma, the seeds' included), it is
 * one voter of one node per shard; health counts it once and shows each shard with its
 * primary; a cluster none of whose seeds answers starts as a voter down, named in a
 * warning without its password.
 */
@WithRedisNodes(count = 2)
@ExtendWith(OutputCaptureExtension.class)
class ClusterVoterConfigurationTests {

	private static RedisCluster cluster;

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RedlockAutoConfiguration.class))
		// a healthy node answers within 1 s on a loaded machine too
		.withPropertyValues("redlock.restart-quarantine=0s", "redlock.node-timeout=1s");

	@BeforeAll
	static void startCluster() {
		cluster = RedisCluster.start(3, 0);
	}

	@AfterAll
	static void stopCluster() {
		cluster.close();
	}

	@Test
	void aClusterVoterInACommaSeparatedValueIsOneVoterAndHealthShowsItsShards(RedisNodes nodes) {
		String value = String.join(",", nodes.node(0).uri(), cluster.uri(), nodes.node(1).uri());
		this.runner.withPropertyValues("redlock.nodes=" + value).run((context) -> {
			assertThat(context).hasNotFailed();
			Redlock redlock = context.getBean(Redlock.class);
			assertThat(redlock.quorum()).isEqualTo(2);
			assertThat(redlock.nodeAddresses()).hasSize(5);
			Health health = healthWithEveryVoterReachable(new RedlockHealthIndicator(redlock));
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsEntry("reachable", 3).containsEntry("counting", 3);
			@SuppressWarnings("unchecked")
			List<Map<String, Object>> details = (List<Map<String, Object>>) health.getDetails().get("nodes");
			assertThat(details).hasSize(5);
			assertThat(details.get(0)).containsEntry("kind", "standalone").containsEntry("voter", 0);
			for (int shard = 0; shard < 3; shard++) {
				assertThat(details.get(1 + shard)).containsEntry("kind", "cluster")
					.containsEntry("voter", 1)
					.containsEntry("master", "127.0.0.1:" + cluster.primaryOf(shard).port())
					.containsEntry("role", "master");
				assertThat((String) details.get(1 + shard).get("node")).startsWith(cluster.uri() + " [shard " + shard);
			}
			assertThat(details.get(4)).containsEntry("voter", 2);
			redlock.tryAcquire("cluster-voter", Duration.ofSeconds(5)).orElseThrow().release();
		});
	}

	@Test
	void twoVotersDownOfThreeAreDownWhateverTheShardsThatAnswer(RedisNodes nodes) {
		String value = String.join(",", cluster.uri(), "redis://127.0.0.1:" + closedPort(),
				"redis://127.0.0.1:" + closedPort());
		this.runner.withPropertyValues("redlock.nodes=" + value).run((context) -> {
			assertThat(context).hasNotFailed();
			Health health = new RedlockHealthIndicator(context.getBean(Redlock.class)).health();
			// three shard nodes answer, but they are one voter of the two a lock needs
			assertThat(health.getStatus()).isEqualTo(Status.DOWN);
			assertThat(health.getDetails()).containsEntry("reachable", 1);
		});
	}

	@Test
	void aClusterNoSeedOfWhichAnswersStartsAsAVoterDownNamedWithoutItsPassword(RedisNodes nodes,
			CapturedOutput output) {
		this.runner.withPropertyValues("redlock.nodes[0]=" + nodes.node(0).uri(),
				"redlock.nodes[1]=redis-cluster://:hunter2@127.0.0.1:" + closedPort() + ",127.0.0.1:" + closedPort(),
				"redlock.nodes[2]=" + nodes.node(1).uri())
			.run((context) -> {
				assertThat(context).hasNotFailed();
				Redlock redlock = context.getBean(Redlock.class);
				Health health = new RedlockHealthIndicator(redlock).health();
				@SuppressWarnings("unchecked")
				List<Map<String, Object>> details = (List<Map<String, Object>>) health.getDetails().get("nodes");
				// placed as one shard: its URI does not say how many it has
				assertThat(details).hasSize(3);
				assertThat(details.get(1)).containsEntry("kind", "cluster").containsEntry("reachable", false);
				assertThat(health.toString()).doesNotContain("hunter2");
				assertThat(output).contains("Redlock voter nodes[1]")
					.contains("no seed told the cluster's slots")
					.contains("?shards=")
					.doesNotContain("hunter2");
				// the two standalone voters carry the locks
				redlock.tryAcquire("cluster-voter-down", Duration.ofSeconds(5)).orElseThrow().release();
			});
	}

	/**
	 * Health once a check found every voter reachable: on a loaded machine one check may
	 * miss a node's answer within the node timeout.
	 */
	private static Health healthWithEveryVoterReachable(RedlockHealthIndicator indicator) {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (true) {
			Health health = indicator.health();
			if (Integer.valueOf(3).equals(health.getDetails().get("reachable")) || System.nanoTime() - deadline > 0) {
				return health;
			}
		}
	}

	/** A loopback port nothing listens on: a connection to it is refused. */
	private static int closedPort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
