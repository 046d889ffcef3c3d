package dev.redlock.integration;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.AsyncTaskExecutor;
import org.springframework.integration.support.locks.LockRegistry;

import dev.redlock.NodeKeys;
import dev.redlock.TestRedlocks;
import dev.redlock.core.Redlock;
import dev.redlock.interceptor.CriticalSection;
import dev.redlock.interceptor.VirtualThreads;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The auto-configured Spring Integration {@link LockRegistry} used from virtual threads
 * of Boot's {@code applicationTaskExecutor}
 * ({@code spring.threads.virtual.enabled=true}), on three real Redis nodes, together with
 * a second registry on its own {@link Redlock} standing for another process.
 */
@SpringBootTest(properties = "spring.threads.virtual.enabled=true")
@WithRedisNodes(count = 3)
@EnabledForJreRange(min = JRE.JAVA_21)
class RedlockLockRegistryVirtualThreadTests {

	private static final String KEY = "redlock:" + RedlockLockRegistry.RESOURCE_PREFIX;

	@Autowired
	private LockRegistry<?> registry;

	@Autowired
	private RedisNodes nodes;

	@Autowired
	@Qualifier("applicationTaskExecutor")
	private AsyncTaskExecutor executor;

	@AutoClose
	private Redlock elsewhere;

	@BeforeEach
	void start() {
		this.elsewhere = TestRedlocks.on(this.nodes);
	}

	@Test
	void lockTryLockAndUnlockFromManyVirtualThreadsOfTwoProcessesRunOneHolderAtATime() throws Exception {
		assertThat(this.registry).isInstanceOf(RedlockLockRegistry.class);
		RedlockLockRegistry otherProcess = new RedlockLockRegistry(this.elsewhere);
		int tasks = 40;
		CriticalSection section = new CriticalSection();
		CountDownLatch start = new CountDownLatch(1);
		List<Future<Boolean>> done = new ArrayList<>();
		for (int i = 0; i < tasks; i++) {
			LockRegistry<?> registry = (i % 2 == 0) ? this.registry : otherProcess;
			boolean tryLock = i % 4 >= 2;
			done.add(this.executor.submit(() -> {
				start.await();
				Lock lock = registry.obtain("vt");
				if (tryLock) {
					if (!lock.tryLock(60, TimeUnit.SECONDS)) {
						throw new IllegalStateException("not locked within 60 s");
					}
				}
				else {
					lock.lock();
				}
				try {
					section.enter();
				}
				finally {
					lock.unlock();
				}
				return VirtualThreads.isVirtual(Thread.currentThread());
			}));
		}
		long tookMillis = VirtualThreads.openAndAwait(start, done, Duration.ofSeconds(90), "ran on a virtual thread");
		assertThat(section.count()).as("no update lost").isEqualTo(tasks);
		assertThat(section.maxInside()).as("most holders at once").isEqualTo(1);
		// the last unlock returned once a quorum had deleted the key; the last node a
		// moment later
		NodeKeys.awaitReleased(this.nodes, KEY + "vt");
		System.out.printf(
				"[virtual threads] lock registry: %d lock/unlock from %d virtual threads in 2 processes: " + "%d ms%n",
				tasks, tasks, tookMillis);
	}

	@Test
	void reentrantForItsVirtualThreadAndExclusiveForOtherVirtualThreads() throws Exception {
		Lock lock = this.registry.obtain("reentrant");
		String seen = this.executor.submit(() -> {
			lock.lock();
			try {
				boolean again = lock.tryLock(1, TimeUnit.SECONDS);
				boolean other = this.executor.submit(() -> lock.tryLock(200, TimeUnit.MILLISECONDS))
					.get(10, TimeUnit.SECONDS);
				boolean elsewhere = new RedlockLockRegistry(this.elsewhere).obtain("reentrant").tryLock();
				lock.unlock();
				// still held: on a quorum of the nodes (a release would have left at most
				// one); the lock returned once a quorum had granted it
				boolean onQuorum = keysOnNodes(KEY + "reentrant") >= 2;
				return "again: " + again + ", other virtual thread: " + other + ", other process: " + elsewhere
						+ ", on a quorum after one unlock: " + onQuorum;
			}
			finally {
				lock.unlock();
			}
		}).get(30, TimeUnit.SECONDS);
		assertThat(seen).isEqualTo(
				"again: true, other virtual thread: false, other process: false, on a quorum after one unlock: true");
		NodeKeys.awaitReleased(this.nodes, KEY + "reentrant");
	}

	@Test
	void unlockFromAnInterruptedVirtualThreadReleasesTheKeyAndKeepsTheInterrupt() throws Exception {
		Lock lock = this.registry.obtain("interrupted");
		boolean interruptedAfterUnlock = this.executor.submit(() -> {
			lock.lock();
			Thread.currentThread().interrupt();
			lock.unlock();
			return Thread.currentThread().isInterrupted();
		}).get(30, TimeUnit.SECONDS);
		assertThat(interruptedAfterUnlock).isTrue();
		assertThat(keysOnNodes(KEY + "interrupted")).as("nodes holding the key after the unlock (quorum 2 of 3)")
			.isLessThanOrEqualTo(1);
		Lock theirs = new RedlockLockRegistry(this.elsewhere).obtain("interrupted");
		assertThat(theirs.tryLock()).as("another process gets the lock at once").isTrue();
		theirs.unlock();
	}

	private int keysOnNodes(String key) {
		int count = 0;
		for (RedisNode node : this.nodes.nodes()) {
			if ("1".equals(node.command("EXISTS", key))) {
				count++;
			}
		}
		return count;
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class TestApplication {

	}

}
