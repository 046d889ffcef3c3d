package dev.redlock.benchmarks;

import java.util.concurrent.TimeUnit;

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

/**
 * One thread, our lock+unlock and the {@link IdealRedlock ideal} client's in turn, each
 * on a fresh key, in one JVM against the same nodes: a paired measurement. Measured in
 * JVMs of their own ({@link Latency}), the two clients' times move with whatever the
 * machine does during each JVM, by more than the difference between them; here both see
 * the same moments of the machine and the same servers, so the drift from one JVM to the
 * next cancels out of their ratio. Both pay for running interleaved (each runs about
 * 5–10% slower than alone, and warms up on half the calls); {@link #idealAndIdeal}, the
 * ideal client against a second instance of itself, shows what the method itself adds to
 * the ratio.
 *
 * <p>
 * Each invocation runs two lock+unlocks, alternating which client goes first. The score
 * is the pair's time; the secondary results {@code firstNanos} and {@code secondNanos}
 * are each client's nanoseconds summed over the iteration's invocations (ours, then the
 * ideal's, in {@link #redlockAndIdeal}), and {@code firstNanos ÷ secondNanos} is the
 * ratio of their times.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Threads(1)
public class SideBySide extends SuiteSettings {

	@Benchmark
	public void redlockAndIdeal(RedisCluster cluster, OurRedlock ours, IdealRedlock ideal, Keys keys, Times times) {
		inTurn((key) -> LockUnlock.redlock(ours, key), (key) -> ideal.lockUnlock(key, LockUnlock.TTL_MILLIS), keys,
				times);
	}

	/**
	 * The control: the ideal client against a second instance of itself, measured as
	 * {@link #redlockAndIdeal} is. Any ratio away from 1 is the method's own bias.
	 */
	@Benchmark
	public void idealAndIdeal(RedisCluster cluster, IdealRedlock ideal, SecondIdeal second, Keys keys, Times times) {
		inTurn((key) -> ideal.lockUnlock(key, LockUnlock.TTL_MILLIS),
				(key) -> second.lockUnlock(key, LockUnlock.TTL_MILLIS), keys, times);
	}

	/**
	 * Runs a lock+unlock of each client, in the order {@link Times#firstGoesFirst} says,
	 * timing only the two calls.
	 */
	private static void inTurn(Client first, Client second, Keys keys, Times times) {
		String firstKey = keys.next();
		String secondKey = keys.next();
		boolean firstHeld;
		boolean secondHeld;
		if (times.firstGoesFirst()) {
			long start = System.nanoTime();
			firstHeld = first.lockUnlock(firstKey);
			long between = System.nanoTime();
			secondHeld = second.lockUnlock(secondKey);
			times.add(between - start, System.nanoTime() - between);
		}
		else {
			long start = System.nanoTime();
			secondHeld = second.lockUnlock(secondKey);
			long between = System.nanoTime();
			firstHeld = first.lockUnlock(firstKey);
			times.add(System.nanoTime() - between, between - start);
		}
		LockUnlock.mustHold(firstHeld, "the first client");
		LockUnlock.mustHold(secondHeld, "the second client");
	}

	/** One client's lock+unlock of a fresh key. */
	@FunctionalInterface
	interface Client {

		/**
		 * @param key a fresh key
		 * @return whether the lock was held
		 */
		boolean lockUnlock(String key);

	}

	/** A second ideal client with connections of its own, for the control. */
	public static class SecondIdeal extends IdealRedlock {

	}

	/**
	 * Each client's time over an iteration, reported beside the score.
	 */
	@AuxCounters(AuxCounters.Type.EVENTS)
	@State(Scope.Thread)
	public static class Times {

		/** Nanoseconds the first-named client took over the iteration's invocations. */
		public long firstNanos;

		/** Nanoseconds the second-named client took over the same invocations. */
		public long secondNanos;

		/** Invocations: each ran both clients once. */
		public long pairs;

		@Setup(Level.Iteration)
		public void reset() {
			this.firstNanos = 0;
			this.secondNanos = 0;
			this.pairs = 0;
		}

		boolean firstGoesFirst() {
			return (this.pairs & 1) == 0;
		}

		void add(long first, long second) {
			this.firstNanos += first;
			this.secondNanos += second;
			this.pairs++;
		}

	}

}
