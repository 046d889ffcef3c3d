package dev.redlock.interceptor;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.integration.support.locks.LockRegistry;
import reactor.core.publisher.Mono;

import dev.redlock.TestRedlocks;
import dev.redlock.annotation.DistributedLock;
import dev.redlock.integration.RedlockLockRegistry;
import dev.redlock.core.Lease;
import dev.redlock.core.Redlock;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Every way of waiting for a lock in a Boot application wakes when another application
 * instance (here a second {@code Redlock} on the same nodes) releases it: the retry delay
 * is set far beyond the bound each waiter is given, so only the nodes' release notices
 * can make it in time.
 */
@SpringBootTest(properties = "redlock.retry-delay=20s")
@WithRedisNodes(count = 3)
class WaitingForALockTests {

	/** Far below the shortest delay before polling again (half the retry delay). */
	private static final long BOUND_SECONDS = 3;

	private static final Duration TTL = Duration.ofSeconds(10);

	@Autowired
	private Jobs jobs;

	@Autowired
	private Redlock redlock;

	@Autowired
	private LockRegistry registry;

	@Autowired
	private RedisNodes nodes;

	@AutoClose
	private Redlock otherInstance;

	@BeforeEach
	void start() {
		this.otherInstance = TestRedlocks.on(this.nodes);
	}

	@Test
	void anAnnotatedMethodWithAWaitTime() throws Exception {
		assertWokenByTheRelease("job:plain", () -> CompletableFuture.supplyAsync(() -> this.jobs.run("plain")));
	}

	@Test
	void anAnnotatedMethodReturningAMono() throws Exception {
		assertWokenByTheRelease("job:reactive",
				() -> CompletableFuture.supplyAsync(() -> this.jobs.runReactive("reactive").block()));
	}

	@Test
	void anAnnotatedMethodReturningAFuture() throws Exception {
		assertWokenByTheRelease("job:async",
				() -> CompletableFuture.supplyAsync(() -> this.jobs.runAsync("async")).thenCompose((future) -> future));
	}

	@Test
	void theLockRegistrysTryLockWithATimeout() throws Exception {
		Lock lock = this.registry.obtain("registry-try");
		assertWokenByTheRelease(RedlockLockRegistry.RESOURCE_PREFIX + "registry-try", () -> supplyInterruptibly(() -> {
			if (!lock.tryLock(30, TimeUnit.SECONDS)) {
				return "timed out";
			}
			lock.unlock();
			return "done";
		}));
	}

	@Test
	void theLockRegistrysLockInterruptibly() throws Exception {
		Lock lock = this.registry.obtain("registry-interruptibly");
		assertWokenByTheRelease(RedlockLockRegistry.RESOURCE_PREFIX + "registry-interruptibly",
				() -> supplyInterruptibly(() -> {
					lock.lockInterruptibly();
					lock.unlock();
					return "done";
				}));
	}

	/**
	 * Holds the resource elsewhere, starts the waiter, releases once it waits, and
	 * expects it done in time.
	 */
	private void assertWokenByTheRelease(String resource, Supplier<CompletableFuture<String>> waiter) throws Exception {
		Lease held = this.otherInstance.acquire(resource, TTL, Duration.ZERO);
		CompletableFuture<String> waiting = waiter.get();
		awaitWaiting(resource);
		held.release();
		assertThat(waiting.get(BOUND_SECONDS, TimeUnit.SECONDS)).isEqualTo("done");
	}

	/**
	 * Runs the call on the common pool; an interrupt ends it with {@code "interrupted"}.
	 */
	private static CompletableFuture<String> supplyInterruptibly(InterruptibleCall call) {
		return CompletableFuture.supplyAsync(() -> {
			try {
				return call.call();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return "interrupted";
			}
		});
	}

	/** A call that may be interrupted while it waits. */
	@FunctionalInterface
	private interface InterruptibleCall {

		String call() throws InterruptedException;

	}

	/**
	 * Until a thread of the application's {@code Redlock} waits, subscribed on every node
	 * to the key's releases.
	 */
	private void awaitWaiting(String resource) {
		String channel = "redlock-released:" + this.redlock.settings().keyPrefix() + resource;
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
		while (this.redlock.waitingThreads() != 1 || !this.nodes.nodes()
			.stream()
			.allMatch((node) -> String.valueOf(node.command("PUBSUB", "NUMSUB", channel)).endsWith("\n1"))) {
			if (System.nanoTime() - deadline > 0) {
				fail("no thread waiting for %s and subscribed to %s after 5 s: %d waiting, %s", resource, channel,
						this.redlock.waitingThreads(), this.nodes.node(0).command("PUBSUB", "NUMSUB", channel));
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(Jobs.class)
	static class TestApplication {

	}

	static class Jobs {

		@DistributedLock(key = "'job:' + #id", ttl = "10s", waitTime = "30s")
		public String run(String id) {
			return "done";
		}

		@DistributedLock(key = "'job:' + #id", ttl = "10s", waitTime = "30s")
		public Mono<String> runReactive(String id) {
			return Mono.just("done");
		}

		@DistributedLock(key = "'job:' + #id", ttl = "10s", waitTime = "30s")
		public CompletableFuture<String> runAsync(String id) {
			return CompletableFuture.supplyAsync(() -> "done");
		}

	}

}
