package dev.redlock.benchmarks;

import java.time.Duration;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockSettings;

/**
 * Our {@link Redlock} over the trial's nodes, shared by all benchmark threads as an
 * application would share it. The restart quarantine is off: the kit's nodes are freshly
 * started and would otherwise not count for 60 s.
 */
@State(Scope.Benchmark)
public class OurRedlock {

	Redlock redlock;

	@Setup(Level.Trial)
	public void build(RedisCluster cluster) {
		this.redlock = Redlock.builder()
			.nodes(cluster.uris())
			.settings(RedlockSettings.defaults()
				.withRestartQuarantine(Duration.ZERO)
				.withNodeTimeout(Duration.ofSeconds(1)))
			.build();
	}

	@TearDown(Level.Trial)
	public void close() {
		if (this.redlock != null) {
			this.redlock.close();
		}
	}

}
