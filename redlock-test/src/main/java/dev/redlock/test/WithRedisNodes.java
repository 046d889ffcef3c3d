package dev.redlock.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Starts {@link #count()} Redis servers once per test class and injects them as a
 * {@link RedisNodes} parameter into test methods, constructors and lifecycle methods.
 * Before each test every node is reset: running, unpaused and empty
 * ({@link RedisNodes#reset()}). {@code @Nested} classes share the nodes of the outermost
 * annotated class.
 *
 * <pre class="code">
 * &#64;WithRedisNodes(count = 3)
 * class LockTests {
 *
 *     &#64;Test
 *     void survivesOneNodeDown(RedisNodes redis) {
 *         redis.node(0).kill();
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
@ExtendWith(RedisNodesExtension.class)
public @interface WithRedisNodes {

	/**
	 * How many servers to start.
	 * @return the number of nodes, at least 1; 3 by default
	 */
	int count() default 3;

	/**
	 * Whether the servers also serve TLS, as those of {@link RedisNodes#startTls(int)}
	 * do: each node's {@link RedisNode#tlsUri()} is its {@code rediss://} address.
	 * @return {@code true} for TLS; {@code false} by default
	 */
	boolean tls() default false;

}
