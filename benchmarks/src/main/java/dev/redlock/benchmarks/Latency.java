package dev.redlock.benchmarks;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Threads;

/**
 * One thread, lock+unlock of a fresh key each invocation: mean time and, in sample mode,
 * percentiles. The floor is one parallel round trip; an ideal Redlock needs two (acquire
 * on all nodes, release on all nodes). A fenced lock+unlock, measured here alone, needs
 * three: the grant, the confirmation of its token, the release.
 */
@BenchmarkMode({ Mode.AverageTime, Mode.SampleTime })
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Threads(1)
public class Latency extends LockUnlockBenchmarks {

	@Benchmark
	public void fenced(RedisCluster cluster, OurRedlock ours, Keys keys) {
		LockUnlock.mustHold(LockUnlock.fenced(ours, keys.next()), "fenced");
	}

}
