package dev.redlock.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Gives a test class one real Redis Cluster: {@link #shards()} primaries with
 * {@link #replicasPerShard()} replicas each, {@code redis-server} processes on loopback
 * ({@link RedisCluster#start(int, int)}), started when a test first asks for it and
 * stopped once the class's tests are done. Unlike {@link WithRedisNodes} nothing is reset
 * between tests: a cluster takes seconds to form, so its tests share it and leave it as
 * they found it (a shard failed over counts as found: its replica serves the same slots).
 *
 * <p>
 * Test methods, constructors and lifecycle methods take it as a {@link RedisCluster}
 * parameter.
 *
 * <pre class="code">
 * &#64;WithRedisCluster(shards = 3, replicasPerShard = 1)
 * class ShardFailoverTests {
 *
 *     &#64;Test
 *     void aFailoverKeepsTheShardsKeys(RedisCluster cluster) {
 *         ...
 *     }
 *
 * }
 * </pre>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(RedisClusterExtension.class)
public @interface WithRedisCluster {

	/**
	 * How many shards (primaries) to start.
	 * @return the number of shards; 3 by default, the fewest whose primaries can elect a
	 * replica in a failed primary's place
	 */
	int shards() default 3;

	/**
	 * How many replicas each shard has.
	 * @return the replicas per shard; 1 by default
	 */
	int replicasPerShard() default 1;

}
