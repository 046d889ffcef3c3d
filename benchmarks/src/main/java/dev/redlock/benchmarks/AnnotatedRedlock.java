package dev.redlock.benchmarks;

import java.util.Map;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.MapPropertySource;

import dev.redlock.annotation.DistributedLock;
import dev.redlock.autoconfigure.RedlockAutoConfiguration;

/**
 * Our {@code @DistributedLock} annotation as an application uses it: a Spring context
 * with the starter's auto-configuration over the trial's nodes, and a bean whose method
 * is annotated. Configured like {@link OurRedlock} (restart quarantine off, node timeout
 * 1 s, no listeners: the context has no meter registry), so the difference between the
 * two is the annotation's own cost: the proxy, the interceptor, the SpEL key.
 */
@State(Scope.Benchmark)
public class AnnotatedRedlock {

	AnnotationConfigApplicationContext context;

	LockedWork work;

	@Setup(Level.Trial)
	public void start(RedisCluster cluster) {
		AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
		context.getEnvironment()
			.getPropertySources()
			.addFirst(new MapPropertySource("benchmark", Map.of("redlock.nodes", String.join(",", cluster.uris()),
					"redlock.restart-quarantine", "0s", "redlock.node-timeout", "1s")));
		context.register(Application.class);
		context.refresh();
		this.context = context;
		this.work = context.getBean(LockedWork.class);
	}

	@TearDown(Level.Trial)
	public void stop() {
		if (this.context != null) {
			this.context.close();
		}
	}

	@Configuration(proxyBeanMethods = false)
	@Import(RedlockAutoConfiguration.class)
	static class Application {

		@Bean
		LockedWork lockedWork() {
			return new LockedWork();
		}

	}

	/** The annotated bean: the method does nothing but hold the lock while it runs. */
	public static class LockedWork {

		/**
		 * Runs under the lock of {@code bench:<key>} with a 10 s TTL and no waiting, like
		 * the other benchmarks.
		 * @param key the resource
		 * @return {@code true}, so the call cannot be optimised away
		 */
		@DistributedLock(name = LockUnlock.NAME, key = "#key", ttl = "10s", waitTime = "0s")
		public boolean run(String key) {
			return true;
		}

		/**
		 * Runs the critical section under the lock of {@code bench:one-key}, one try
		 * without waiting.
		 * @param critical what to run while holding the lock
		 * @throws dev.redlock.core.LockNotAcquiredException when someone else holds it
		 */
		@DistributedLock(name = LockUnlock.NAME, key = "'" + OneKey16.KEY + "'", ttl = "10s", waitTime = "0s")
		public void runOnOneKey(Runnable critical) {
			critical.run();
		}

	}

}
