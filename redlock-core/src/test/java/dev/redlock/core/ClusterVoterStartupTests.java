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
 * which must not stop the application when the other voters make a quorum. When its URI
 * says how many shards the cluster has ({@code ?shards=3}), its shard nodes can be
 * numbered before its slot map is read; they count as down until the cluster answers,
 * then take the shards in the order of their first slot, and the voter counts. When it
 * does not say, the voter is placed as one shard: once the cluster answers, it follows
 * the shard of the first slots, and refuses the locks of the others' slots until a
 * restart.
 */
@WithRedisNodes(count = 2)
@WithRedisCluster(shards = 3, replicasPerShard = 0)
class ClusterVoterStartupTests {

	private static final RedlockSettings SETTINGS = TestSupport.withQuarantine(Duration.ofSeconds(6));

	@Test
	void aClusterDownAtStartupIsAVoterDownThatCountsOnceItAnswers(RedisNodes nodes, RedisCluster cluster) {
		RedisNode x = nodes.node(0);
		RedisNode y = nodes.node(1);
		String voter = cluster.uri() + "?shards=3";
		cluster.nodes().forEach(RedisNode::kill);
		try (Redlock undeclared = redlock(cluster.uri(), x.uri(), y.uri())) {
			NodeStatus placed = undeclared.checkNodes().get(0);
			assertThat(placed.node()).isEqualTo(cluster.uri() + " [shard 0 of 1]");
			assertThat(placed.reachable()).isFalse();
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
				TestSupport.awaitTrue("the voter placed as one shard follows the first", Duration.ofSeconds(40),
						() -> undeclared.checkNodes().get(0).counts() && ("127.0.0.1:" + cluster.primaryOf(0).port())
							.equals(undeclared.checkNodes().get(0).master()),
						() -> String.valueOf(undeclared.checkNodes()));
				// with Y down, the cluster and X make the quorum
				y.kill();
				String key = ClusterKeys.lockKey(TestSupport.PREFIX + "after-start");
				try (Lease lease = redlock.acquire("after-start", Duration.ofSeconds(5), Duration.ofSeconds(10))) {
					RedisNode serving = cluster.primaryOf(cluster.shardOf(key));
					assertThat(serving.command("EXISTS", key)).as("the lock on the shard its slot picks")
						.isEqualTo("1");
				}
				// the voter placed as one shard: the first shard's locks count, the
				// others'
				// are refused there until the application restarts
				String first = ClusterShardVoterTests.resourceOnShard(cluster, 0);
				try (Lease lease = undeclared.acquire(first, Duration.ofSeconds(5), Duration.ofSeconds(10))) {
					assertThat(lease.redisKey()).as("stored as the other client stores it")
						.isEqualTo(ClusterKeys.lockKey(TestSupport.PREFIX + first));
					assertThat(cluster.primaryOf(0).command("EXISTS", lease.redisKey())).isEqualTo("1");
					assertThatThrownBy(() -> redlock.acquire(first, Duration.ofSeconds(5), Duration.ZERO))
						.as("the same lock, for the client that knew the shards")
						.isInstanceOf(LockNotAcquiredException.class);
				}
				String other = ClusterShardVoterTests.resourceOnShard(cluster, 1);
				assertThatThrownBy(() -> undeclared.acquire(other, Duration.ofSeconds(5), Duration.ZERO))
					.isInstanceOf(LockNotAcquiredException.class);
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
