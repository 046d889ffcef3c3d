package dev.redlock.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.protocol.ClusterKeys;
import dev.redlock.test.RedisCluster;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisCluster;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A cluster voter none of whose nodes answers when the application starts: a voter down,
 * which must not stop the application when the other voters make a quorum. Its URI says
 * how many shards the cluster has ({@code ?shards=3}), so its shard nodes can be numbered
 * before its slot map is read; they count as down until the cluster answers, then take
 * the shards in the order of their first slot, and the voter counts.
 */
@WithRedisNodes(count = 2)
@WithRedisCluster(shards = 3, replicasPerShard = 0)
class ClusterVoterStartupTests {

	private static final RedlockSettings SETTINGS = TestSupport.withQuarantine(Duration.ofSeconds(6));

	@Test
	void aClusterDownAtStartupCountsOnceItAnswersWhenItsUriSaysHowManyShardsItHas(RedisNodes nodes,
			RedisCluster cluster) {
		RedisNode x = nodes.node(0);
		RedisNode y = nodes.node(1);
		String voter = cluster.uri() + "?shards=3";
		cluster.nodes().forEach(RedisNode::kill);
		try {
			assertThatThrownBy(() -> redlock(cluster.uri(), x.uri(), y.uri()))
				.isInstanceOfSatisfying(InvalidRedlockConfigurationException.class, (ex) -> {
					assertThat(ex.setting()).isEqualTo("nodes[0]");
					assertThat(ex.getMessage()).contains("no seed told the cluster's slots").contains("?shards=");
				});
			try (Redlock redlock = redlock(voter, x.uri(), y.uri())) {
				List<NodeStatus> statuses = redlock.checkNodes();
				assertThat(statuses).hasSize(5);
				for (int shard = 0; shard < 3; shard++) {
					assertThat(statuses.get(shard).node()).isEqualTo(voter + " [shard " + shard + " of 3]");
					assertThat(statuses.get(shard).reachable()).as("shard " + shard + " reachable").isFalse();
				}
				// X and Y carry the locks meanwhile
				try (Lease lease = redlock.acquire("while-down", Duration.ofSeconds(5), Duration.ofSeconds(10))) {
					assertThat(x.command("EXISTS", lease.redisKey())).isEqualTo("1");
				}

				cluster.nodes().forEach(RedisNode::restart);
				TestSupport.awaitTrue("each shard node follows its shard and counts", Duration.ofSeconds(40), () -> {
					List<NodeStatus> now = redlock.checkNodes();
					for (int shard = 0; shard < 3; shard++) {
						if (!now.get(shard).counts()
								|| !("127.0.0.1:" + cluster.primaryOf(shard).port()).equals(now.get(shard).master())) {
							return false;
						}
					}
					return true;
				}, () -> String.valueOf(redlock.checkNodes()));
				// with Y down, the cluster and X make the quorum
				y.kill();
				String key = ClusterKeys.lockKey(TestSupport.PREFIX + "after-start");
				try (Lease lease = redlock.acquire("after-start", Duration.ofSeconds(5), Duration.ofSeconds(10))) {
					RedisNode serving = cluster.primaryOf(cluster.shardOf(key));
					assertThat(serving.command("EXISTS", key)).as("the lock on the shard its slot picks")
						.isEqualTo("1");
				}
			}
		}
		finally {
			y.restart();
			cluster.nodes().stream().filter((node) -> !node.isRunning()).forEach(RedisNode::restart);
		}
	}

	private static Redlock redlock(String... uris) {
		return Redlock.builder().nodes(List.of(uris)).settings(SETTINGS).build();
	}

}
