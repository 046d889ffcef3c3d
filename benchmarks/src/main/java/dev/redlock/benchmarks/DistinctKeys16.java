package dev.redlock.benchmarks;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Threads;

/**
 * 16 threads, each locking and unlocking its own fresh keys: operations per second,
 * against the floor's parallel round trips per second from the same 16 threads. All
 * threads share one client (one {@code Redlock}, one Redisson client per node); the floor
 * and the naive client have one connection per node per thread. {@code pipelined} is the
 * ideal client over one connection per node shared by all threads
 * ({@link PipelinedIdeal}): what auto-pipelining could give.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(16)
public class DistinctKeys16 extends LockUnlockBenchmarks {

	@Benchmark
	public void pipelined(RedisCluster cluster, PipelinedIdeal pipelined, Keys keys) {
		LockUnlock.mustHold(pipelined.lockUnlock(keys.next(), LockUnlock.TTL_MILLIS), "pipelined");
	}

}
