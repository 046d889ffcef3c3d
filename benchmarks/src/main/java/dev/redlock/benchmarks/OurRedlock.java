package dev.redlock.benchmarks;

import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.locks.LockSupport;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import dev.redlock.core.NodeStatus;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockSettings;

/**
 * Our {@link Redlock} over the trial's nodes, shared by all benchmark threads as an
 * application would share it, with or without the restart quarantine and its detectors.
 */
@State(Scope.Benchmark)
public class OurRedlock {

	/**
	 * {@code off}: no restart quarantine, so no detector of forgetful nodes (acquisitions
	 * are a plain {@code SET NX}); {@code on}: a quarantine of the benchmarks' TTL
	 * ({@value LockUnlock#TTL_SECONDS} s), every acquisition's {@code SET} followed, in
	 * the same round trip, by reads of the node's clock and marker, judged by the client
	 * (the trial waits until the fresh nodes count).
	 */
	@Param({ "off" })
	public String quarantine;

	/**
	 * {@code pipelined} (the library's default): shared while many rounds are underway;
	 * {@code shared}: every round over one connection per node shared by every thread;
	 * {@code pooled}: a connection lent to each round.
	 */
	@Param({ "pipelined" })
	public String transport;

	Redlock redlock;

	@Setup(Level.Trial)
	public void build(RedisCluster cluster) {
		boolean on = switch (this.quarantine) {
			case "on" -> true;
			case "off" -> false;
			default -> throw new IllegalArgumentException("quarantine must be on or off, was " + this.quarantine);
		};
		Duration quarantine = on ? LockUnlock.TTL : Duration.ZERO;
		this.redlock = Redlock.builder()
			.nodes(cluster.uris())
			.settings(RedlockSettings.builder()
				.restartQuarantine(quarantine)
				.defaultTtl(on ? quarantine : Duration.ofSeconds(30))
				.nodeTimeout(Duration.ofSeconds(1))
				.transport(RedlockSettings.Transport.valueOf(this.transport.toUpperCase(Locale.ROOT)))
				.build())
			.build();
		long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
		while (on && !this.redlock.checkNodes().stream().allMatch(NodeStatus::counts)) {
			if (System.nanoTime() - end > 0) {
				throw new IllegalStateException("the nodes never counted: " + this.redlock.checkNodes());
			}
			LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
		}
	}

	@TearDown(Level.Trial)
	public void close() {
		if (this.redlock != null) {
			this.redlock.close();
		}
	}

}
