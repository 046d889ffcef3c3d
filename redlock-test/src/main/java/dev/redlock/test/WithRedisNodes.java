package dev.redlock.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Gives a test real Redis nodes: {@link #count()} {@code redis-server} processes on
 * loopback, in plain JUnit Jupiter tests and in Spring TestContext tests
 * ({@code @SpringBootTest}, {@code @SpringJUnitConfig}, ...) alike.
 *
 * <p>
 * <strong>One rule for both.</strong> The nodes are shared, per
 * {@code (count, tls, inProcess)}, by every test of the JVM run (so Spring's context
 * cache, which keeps contexts pointing at them, stays valid) and stopped by a JVM
 * shutdown hook; do not close them. Before each test method, ahead of the test's own
 * {@code @BeforeEach} methods, they are {@link RedisNodes#reset() reset}: killed or
 * stopped nodes restarted, paused ones resumed, client pauses lifted, data flushed.
 * Anything else a test changes on a node ({@code CONFIG SET}, ACL users) outlives it
 * unless the test undoes it or restarts the node; a node left refusing the kit's commands
 * (a password, a replica) is restarted by the reset.
 *
 * <p>
 * <strong>Every test</strong> can take the nodes as a {@link RedisNodes} parameter of its
 * test methods, constructor and lifecycle methods.
 *
 * <p>
 * <strong>A Spring test</strong> also gets {@code redlock.nodes[0..count-1]} set to the
 * nodes' URIs (highest precedence; their {@code rediss://} TLS URIs with {@link #tls()}),
 * {@code redlock.restart-quarantine=0s} at the lowest precedence (the nodes hold no other
 * application's locks; a test of the quarantine sets the property itself), and the
 * {@link RedisNodes} as a bean named {@code redisNodes}, so it can
 * {@code @Autowired RedisNodes nodes} too. Restarted local nodes keep their ports, so the
 * properties stay right; with the {@code testcontainers} backend a restart may change a
 * port.
 *
 * <p>
 * Found on the test class, a superclass or an enclosing class of a {@code @Nested} test;
 * the nearest one wins.
 *
 * <pre class="code">
 * &#64;WithRedisNodes(count = 3)
 * class LockTests {
 *
 *     &#64;Test
 *     void survivesOneNodeDown(RedisNodes redis) {
 *         redis.node(0).kill(); // back, empty, before the next test
 *         ...
 *     }
 *
 * }
 *
 * &#64;SpringBootTest
 * &#64;WithRedisNodes(count = 3)
 * class CheckoutTests {
 *
 *     &#64;Autowired
 *     RedisNodes nodes;
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

	/**
	 * Whether the nodes are in-process stand-ins ({@link RedisNodes#startInProcess(int)})
	 * rather than {@code redis-server} processes: nothing to install, for tests of code
	 * that uses the lock; not for tests of how servers fail.
	 * @return {@code true} for stand-ins; {@code false} by default
	 */
	boolean inProcess() default false;

}
