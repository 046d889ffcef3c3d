package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;

import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many threads over two independent {@link Redlock} instances (separate connection pools,
 * as two processes would have) fight for one key and do a read-think-write on a shared
 * register: the lock is all that keeps the register exact.
 */
@WithRedisNodes(count = 5)
class MutualExclusionTests {

	private static final int THREADS = 16;

	private static final int ACQUISITIONS_PER_THREAD = 130;

	@Test
	void atMostOneHolderAtATime(RedisNodes nodes) throws Exception {
		assertAtMostOneHolder(nodes);
	}

	/**
	 * Runs the fight over these nodes and checks the register: also for a quorum of
	 * different servers ({@code NativeCommandsTests}).
	 */
	static void assertAtMostOneHolder(RedisNodes nodes) throws Exception {
		RedlockSettings settings = TestSupport.SETTINGS.withRetryDelay(Duration.ofMillis(4))
			.withNodeTimeout(Duration.ofMillis(500));
		AtomicInteger occupancy = new AtomicInteger();
		AtomicInteger maxOccupancy = new AtomicInteger();
		AtomicLong register = new AtomicLong();
		AtomicInteger acquisitions = new AtomicInteger();
		AtomicInteger expiredReleases = new AtomicInteger();
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService executor = Executors.newFixedThreadPool(THREADS);
		try (Redlock first = TestSupport.redlock(nodes, settings);
				Redlock second = TestSupport.redlock(nodes, settings)) {
			List<Future<?>> workers = new ArrayList<>();
			for (int t = 0; t < THREADS; t++) {
				Redlock redlock = (t % 2 == 0) ? first : second;
				workers.add(executor.submit(() -> {
					start.await();
					for (int i = 0; i < ACQUISITIONS_PER_THREAD; i++) {
						try (Lease lease = redlock.acquire("register", Duration.ofSeconds(10),
								Duration.ofSeconds(60))) {
							int inside = occupancy.incrementAndGet();
							maxOccupancy.accumulateAndGet(inside, Math::max);
							long value = register.get();
							LockSupport.parkNanos(100_000); // the "think" between read
															// and write
							register.set(value + 1);
							acquisitions.incrementAndGet();
							occupancy.decrementAndGet();
							if (lease.release() != ReleaseOutcome.RELEASED) {
								expiredReleases.incrementAndGet();
							}
						}
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> worker : workers) {
				worker.get(5, TimeUnit.MINUTES);
			}
		}
		finally {
			executor.shutdownNow();
		}
		int total = THREADS * ACQUISITIONS_PER_THREAD;
		System.out.printf("mutual exclusion: %d acquisitions, max occupancy %d, register %d%n", acquisitions.get(),
				maxOccupancy.get(), register.get());
		assertThat(acquisitions.get()).isEqualTo(total).isGreaterThanOrEqualTo(2_000);
		assertThat(maxOccupancy.get()).isEqualTo(1);
		assertThat(register.get()).isEqualTo(total);
		assertThat(expiredReleases.get()).isZero();
		TestSupport.awaitNoKeys(nodes);
	}

}
