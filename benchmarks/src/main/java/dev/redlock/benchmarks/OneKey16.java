package dev.redlock.benchmarks;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;

import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.LockRequest;

/**
 * 16 threads contending for one key with a single try each (no wait): the secondary
 * result {@code acquired} is acquisitions per second, {@code refused} attempts that found
 * the lock taken, and {@code violations} the number of times a thread got the lock while
 * another thread of this JVM still held it (must be 0).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(16)
public class OneKey16 extends SuiteSettings {

	static final String KEY = "bench:one-key";

	/** How many threads believe they hold the lock right now. */
	@State(Scope.Benchmark)
	public static class Holders {

		final AtomicInteger count = new AtomicInteger();

	}

	/** Per-thread outcomes, reported as rates. */
	@AuxCounters(AuxCounters.Type.OPERATIONS)
	@State(Scope.Thread)
	public static class Outcomes {

		public long acquired;

		public long refused;

		@Setup(Level.Iteration)
		public void reset() {
			this.acquired = 0;
			this.refused = 0;
		}

	}

	/** Per-thread safety violations, reported as a total. */
	@AuxCounters(AuxCounters.Type.EVENTS)
	@State(Scope.Thread)
	public static class Safety {

		public long violations;

		@Setup(Level.Iteration)
		public void reset() {
			this.violations = 0;
		}

	}

	@Benchmark
	public void naive(NaiveRedlock naive, Holders holders, Outcomes outcomes, Safety safety) {
		String value = naive.tryLock(KEY, LockUnlock.TTL_MILLIS);
		if (held(value != null, holders, outcomes, safety)) {
			naive.unlock(KEY, value);
		}
	}

	@Benchmark
	public void redisson(RedissonNodes redisson, Holders holders, Outcomes outcomes, Safety safety)
			throws InterruptedException {
		var lock = redisson.lock(KEY);
		if (held(lock.tryLock(0, LockUnlock.TTL_MILLIS, TimeUnit.MILLISECONDS), holders, outcomes, safety)) {
			lock.unlock();
		}
	}

	@Benchmark
	public void redlock(OurRedlock ours, Holders holders, Outcomes outcomes, Safety safety) {
		var lease = ours.redlock.tryAcquire(LockRequest.of(KEY, LockUnlock.TTL).named(LockUnlock.NAME)).orElse(null);
		if (held(lease != null, holders, outcomes, safety)) {
			lease.release();
		}
	}

	@Benchmark
	public void annotated(AnnotatedRedlock annotated, Holders holders, Outcomes outcomes, Safety safety) {
		try {
			annotated.work.runOnOneKey(() -> hold(holders, outcomes, safety));
		}
		catch (LockNotAcquiredException ex) {
			outcomes.refused++;
		}
	}

	/**
	 * Counts one attempt: refused, or acquired and checked as by
	 * {@link #hold(Holders, Outcomes, Safety)}.
	 * @return whether the caller holds the lock and is to release it
	 */
	private static boolean held(boolean acquired, Holders holders, Outcomes outcomes, Safety safety) {
		if (acquired) {
			hold(holders, outcomes, safety);
		}
		else {
			outcomes.refused++;
		}
		return acquired;
	}

	/**
	 * Counts the acquisition and checks that no one else holds the lock; leaves before
	 * the caller releases.
	 */
	private static void hold(Holders holders, Outcomes outcomes, Safety safety) {
		outcomes.acquired++;
		if (holders.count.incrementAndGet() != 1) {
			safety.violations++;
		}
		holders.count.decrementAndGet();
	}

}
