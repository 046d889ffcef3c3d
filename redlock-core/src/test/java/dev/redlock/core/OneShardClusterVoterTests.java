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

/**
 * A cluster of one shard as a voter, beside two standalone masters: its one node serves
 * every slot, yet a lock's keys are stored in one hash tag as with a cluster of several
 * shards, so that a fenced lock's two keys share a slot (a cluster node refuses a script
 * that declares keys of two slots) and clients started before and after the cluster is
 * resharded store their locks alike.
 */
@WithRedisNodes(count = 2)
@WithRedisCluster(shards = 1, replicasPerShard = 0)
class OneShardClusterVoterTests {

	@Test
	void aFencedLockCountsOnAClusterOfOneShardWithItsKeysInOneHashTag(RedisNodes nodes, RedisCluster cluster) {
		RedisNode x = nodes.node(0);
		RedisNode y = nodes.node(1);
		RedlockSettings settings = TestSupport.withQuarantine(Duration.ofSeconds(6));
		try (Redlock redlock = Redlock.builder()
			.nodes(List.of(cluster.uri(), x.uri(), y.uri()))
			.settings(settings)
			.build()) {
			ForgetfulNodes.awaitCounting(redlock);
			// with Y down, the cluster's grant is needed
			y.kill();
			String resource = "one-shard-fenced";
			try (Lease lease = redlock.acquire(LockRequest.of(resource, Duration.ofSeconds(5)).fenced(),
					Duration.ZERO)) {
				assertThat(lease.fencingToken()).isPresent();
				assertThat(lease.redisKey()).isEqualTo(ClusterKeys.lockKey(TestSupport.PREFIX + resource));
				RedisNode shard = cluster.primaryOf(0);
				assertThat(shard.command("EXISTS", lease.redisKey())).as("the lock on the cluster").isEqualTo("1");
				assertThat(shard.command("EXISTS", ClusterKeys.fenceKey(TestSupport.PREFIX + resource)))
					.as("its counter, in the lock's slot")
					.isEqualTo("1");
				assertThat(x.command("EXISTS", lease.redisKey())).as("the same key on X").isEqualTo("1");
			}
		}
		finally {
			y.restart();
		}
	}

}
