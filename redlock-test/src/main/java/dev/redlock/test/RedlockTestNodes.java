package dev.redlock.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * For Spring TestContext tests ({@code @SpringBootTest}, {@code @SpringJUnitConfig},
 * ...): starts {@link #count()} Redis servers, sets {@code redlock.nodes[0..count-1]} to
 * their URIs (highest precedence) and registers the {@link RedisNodes} as a bean named
 * {@code redisNodes}, so a test can {@code @Autowired RedisNodes nodes} to inject faults.
 * It also sets {@code redlock.restart-quarantine=0s} at the lowest precedence: the nodes
 * were just started (their uptime is short) and hold nobody's locks; a test of the
 * quarantine sets the property itself.
 *
 * <p>
 * The servers are shared, per {@code count}, by every test context of the JVM run (so
 * Spring's context cache stays valid) and stopped by a JVM shutdown hook. Their data and
 * faults therefore outlive a test: call {@link RedisNodes#reset()} in a
 * {@code @BeforeEach} for isolation. Restarted local nodes keep their ports, so the
 * properties stay right; with the {@code testcontainers} backend a restart may change a
 * port.
 *
 * <p>
 * Found on the test class, a superclass or an enclosing class of a {@code @Nested} test.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
public @interface RedlockTestNodes {

	/**
	 * How many servers to start.
	 * @return the number of nodes, at least 1; 3 by default
	 */
	int count() default 3;

}
