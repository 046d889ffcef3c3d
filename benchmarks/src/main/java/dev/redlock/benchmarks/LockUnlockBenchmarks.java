package dev.redlock.benchmarks;

import org.openjdk.jmh.annotations.Benchmark;

/**
 * The six lock+unlock benchmarks, measured under the mode and thread count of each
 * subclass ({@link Latency}, {@link DistinctKeys16}): JMH generates the inherited methods
 * once per concrete class.
 */
public abstract class LockUnlockBenchmarks extends SuiteSettings {

	@Benchmark
	public Object floor(RedisCluster cluster, Floor floor, Keys keys) {
		return LockUnlock.floor(floor, keys.next());
	}

	@Benchmark
	public void ideal(RedisCluster cluster, IdealRedlock ideal, Keys keys) {
		LockUnlock.mustHold(ideal.lockUnlock(keys.next(), LockUnlock.TTL_MILLIS), "ideal");
	}

	@Benchmark
	public void naive(RedisCluster cluster, NaiveRedlock naive, Keys keys) {
		LockUnlock.mustHold(LockUnlock.naive(naive, keys.next()), "naive");
	}

	@Benchmark
	public void redisson(RedisCluster cluster, RedissonNodes redisson, Keys keys) throws InterruptedException {
		LockUnlock.mustHold(LockUnlock.redisson(redisson, keys.next()), "redisson");
	}

	@Benchmark
	public void redlock(RedisCluster cluster, OurRedlock ours, Keys keys) {
		LockUnlock.mustHold(LockUnlock.redlock(ours, keys.next()), "redlock");
	}

	@Benchmark
	public boolean annotated(RedisCluster cluster, AnnotatedRedlock annotated, Keys keys) {
		return annotated.work.run(keys.next());
	}

}
