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
 * machine does during each JVM (on two cores, where the five servers and the client share
 * the CPUs, one JVM runs 20–30% slower than the next); here both see the same moments, so
 * the ratio of their times keeps only what the clients themselves cost.
 *
 * <p>
 * Each invocation runs both, first one then the other, alternating which goes first. The
 * score is the pair's time; the secondary results {@code redlockNanos} and
 * {@code idealNanos} are each client's nanoseconds summed over the iteration, and
 * {@code pairs} the invocations: their ratio is ours ÷ the ideal's.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Threads(1)
public class SideBySide extends SuiteSettings {

	@Benchmark
	public void redlockAndIdeal(RedisCluster cluster, OurRedlock ours, IdealRedlock ideal, Keys keys, Times times) {
		boolean oursFirst = (times.pairs & 1) == 0;
		long start = System.nanoTime();
		if (oursFirst) {
			LockUnlock.mustHold(LockUnlock.redlock(ours, keys.next()), "redlock");
		}
		else {
			LockUnlock.mustHold(ideal.lockUnlock(keys.next(), LockUnlock.TTL_MILLIS), "ideal");
		}
		long between = System.nanoTime();
		if (oursFirst) {
			LockUnlock.mustHold(ideal.lockUnlock(keys.next(), LockUnlock.TTL_MILLIS), "ideal");
		}
		else {
			LockUnlock.mustHold(LockUnlock.redlock(ours, keys.next()), "redlock");
		}
		long end = System.nanoTime();
		times.redlockNanos += oursFirst ? between - start : end - between;
		times.idealNanos += oursFirst ? end - between : between - start;
		times.pairs++;
	}

	/**
	 * Each client's time over an iteration, reported beside the score.
	 */
	@AuxCounters(AuxCounters.Type.EVENTS)
	@State(Scope.Thread)
	public static class Times {

		/** Nanoseconds our client took over the iteration's invocations. */
		public long redlockNanos;

		/** Nanoseconds the ideal client took over the same invocations. */
		public long idealNanos;

		/** Invocations: each ran both clients once. */
		public long pairs;

		@Setup(Level.Iteration)
		public void reset() {
			this.redlockNanos = 0;
			this.idealNanos = 0;
			this.pairs = 0;
		}

	}

}
