package dev.redlock.integration;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.redlock.NodeKeys;
import dev.redlock.TwoRedlocks;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RedlockLockRegistry#expireUnusedOlderThan(long)} on three real nodes: the
 * registry keeps the locks in use (and those used within the age), forgets the others,
 * and a forgotten key's lock works again, through a new object or an old reference.
 */
@WithRedisNodes(count = 3)
class RedlockLockRegistryExpiryTests {

	private static final int KEYS = 10_000;

	private RedisNodes nodes;

	@AutoClose
	private TwoRedlocks redlocks;

	@BeforeEach
	void start(RedisNodes nodes) {
		this.nodes = nodes;
		this.redlocks = TwoRedlocks.on(nodes);
	}

	@Test
	void expiryKeepsOnlyTheLocksInUse() throws Exception {
		RedlockLockRegistry registry = new RedlockLockRegistry(this.redlocks.here());
		// held across the expiry: two by this thread (one of them twice), one by another
		Lock first = registry.obtain("held-1");
		Lock second = registry.obtain("held-2");
		first.lock();
		first.lock();
		second.lock();
		CountDownLatch otherHolds = new CountDownLatch(1);
		CountDownLatch otherMayUnlock = new CountDownLatch(1);
		CompletableFuture<Void> other = CompletableFuture.runAsync(() -> {
			Lock third = registry.obtain("held-3");
			third.lock();
			try {
				otherHolds.countDown();
				await(otherMayUnlock);
			}
			finally {
				third.unlock();
			}
		});
		assertThat(otherHolds.await(10, TimeUnit.SECONDS)).isTrue();
		lockAndUnlockDistinctKeys(registry);
		int before = registry.size();
		registry.expireUnusedOlderThan(0);
		int after = registry.size();
		System.out.printf("RedlockLockRegistry: %d locks after %d keys locked and unlocked, %d after expiry%n", before,
				KEYS, after);
		assertThat(before).isEqualTo(KEYS + 3);
		assertThat(after).as("only the held locks are left").isEqualTo(3);
		// the held ones survived: the same objects, still exclusive, and they unlock fine
		assertThat(registry.obtain("held-1")).isSameAs(first);
		assertThat(registry.obtain("held-2")).isSameAs(second);
		assertThat(new RedlockLockRegistry(this.redlocks.elsewhere()).obtain("held-1").tryLock()).isFalse();
		first.unlock();
		first.unlock();
		second.unlock();
		otherMayUnlock.countDown();
		other.get(10, TimeUnit.SECONDS);
		for (String key : List.of("held-1", "held-2", "held-3")) {
			awaitReleased(key);
		}
		registry.expireUnusedOlderThan(0);
		assertThat(registry.size()).isZero();
		// a forgotten key gets a new lock, which works
		Lock again = registry.obtain("held-1");
		assertThat(again).isNotSameAs(first);
		assertThat(again.tryLock()).isTrue();
		assertThat(nodesHolding("held-1")).isGreaterThanOrEqualTo(2);
		again.unlock();
		awaitReleased("held-1");
	}

	@Test
	void locksUsedWithinTheAgeAreKeptUntilTheyAreOlder() {
		RedlockLockRegistry registry = new RedlockLockRegistry(this.redlocks.here());
		Lock lock = registry.obtain("recent");
		lock.lock();
		lock.unlock();
		registry.expireUnusedOlderThan(60_000);
		assertThat(registry.size()).as("used within the last minute").isOne();
		assertThat(registry.obtain("recent")).isSameAs(lock);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
		while (registry.size() > 0 && System.nanoTime() - deadline < 0) {
			registry.expireUnusedOlderThan(100);
			Thread.onSpinWait();
		}
		assertThat(registry.size()).as("forgotten once unused for 100 ms").isZero();
	}

	@Test
	void aReferenceKeptAcrossTheExpiryIsStillTheKeysLock() throws Exception {
		RedlockLockRegistry registry = new RedlockLockRegistry(this.redlocks.here());
		// nobody obtained the key again: locking the old reference makes it the key's
		// lock
		Lock kept = registry.obtain("kept");
		registry.expireUnusedOlderThan(0);
		assertThat(registry.size()).isZero();
		kept.lock();
		assertThat(registry.obtain("kept")).isSameAs(kept);
		assertThat(registry.obtain("kept").tryLock()).as("reentrant").isTrue();
		kept.unlock();
		kept.unlock();
		// someone obtained it again: both objects are the one lock of the key
		Lock old = registry.obtain("shared");
		registry.expireUnusedOlderThan(0);
		Lock fresh = registry.obtain("shared");
		assertThat(fresh).isNotSameAs(old);
		old.lock();
		assertThat(fresh.tryLock()).as("reentrant through the new object").isTrue();
		registry.expireUnusedOlderThan(0);
		assertThat(registry.size()).as("held, so kept").isOne();
		assertThat(CompletableFuture.supplyAsync(fresh::tryLock).get(10, TimeUnit.SECONDS)).as("another thread")
			.isFalse();
		assertThat(CompletableFuture.supplyAsync(old::tryLock).get(10, TimeUnit.SECONDS)).as("another thread")
			.isFalse();
		fresh.unlock();
		assertThat(nodesHolding("shared")).as("one hold is left").isGreaterThanOrEqualTo(2);
		old.unlock();
		awaitReleased("shared");
		registry.expireUnusedOlderThan(0);
		assertThat(registry.size()).as("failed attempts and released holds keep nothing").isZero();
	}

	private static void lockAndUnlockDistinctKeys(RedlockLockRegistry registry) throws Exception {
		ExecutorService pool = Executors.newFixedThreadPool(8);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int i = 0; i < KEYS; i++) {
				String key = "order-" + i;
				done.add(pool.submit(() -> {
					Lock lock = registry.obtain(key);
					assertThat(lock.tryLock(10, TimeUnit.SECONDS)).as(key).isTrue();
					lock.unlock();
					return null;
				}));
			}
			for (Future<?> future : done) {
				future.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
	}

	/** How many nodes have the key's lock (a quorum once acquired). */
	private int nodesHolding(String key) {
		return NodeKeys.holding(this.nodes, redisKey(key));
	}

	/**
	 * Waits until no node has the key's lock (a release may settle on a quorum first).
	 */
	private void awaitReleased(String key) {
		NodeKeys.awaitReleased(this.nodes, redisKey(key));
	}

	private static String redisKey(String key) {
		return "redlock:" + RedlockLockRegistry.RESOURCE_PREFIX + key;
	}

	private static void await(CountDownLatch latch) {
		try {
			assertThat(latch.await(60, TimeUnit.SECONDS)).isTrue();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
