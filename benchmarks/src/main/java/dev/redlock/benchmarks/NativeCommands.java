package dev.redlock.benchmarks;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

import dev.redlock.core.Lease;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockSettings;
import dev.redlock.core.ReleaseOutcome;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;

/**
 * The lock scripts against the native commands (issue 48), side by side in one run, on
 * five nodes of one newer server ({@code redlock-test/servers.sh} prepares them): the
 * client's time per lock+unlock (one thread), the throughput from 16 threads, and the
 * nodes' own time per lock+unlock, the sum of {@code INFO commandstats} {@code usec} over
 * the commands a lock+unlock sends, printed at the end of each trial. For
 * {@code scripts}, the nodes' default user is denied the native compare-and-delete, so
 * that the first release on each node falls back to the scripts, as on an older server
 * (done before the counts start). The restart quarantine is off: an acquisition is a
 * plain {@code SET NX PX} either way.
 */
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class NativeCommands extends SuiteSettings {

	/** The commands a plain lock+unlock sends, scripts or native. */
	private static final Set<String> LOCK_COMMANDS = Set.of("set", "evalsha", "eval", "delex", "delifeq", "publish");

	/** The nodes of one trial and the client over them. */
	@State(Scope.Benchmark)
	public static class Nodes {

		@Param({ "valkey-9.1", "redis-8.6" })
		public String server;

		@Param({ "scripts", "native" })
		public String commands;

		RedisNodes redis;

		Redlock redlock;

		final LongAdder locks = new LongAdder();

		@Setup(Level.Trial)
		public void start() {
			Path binary = RedisNodes.preparedServer(this.server);
			this.redis = RedisNodes.startServers(Collections.nCopies(5, binary));
			if (this.commands.equals("scripts")) {
				String deny = this.server.startsWith("valkey") ? "-delifeq" : "-delex";
				this.redis.nodes().forEach((node) -> node.command("ACL", "SETUSER", "default", deny));
			}
			else if (!this.commands.equals("native")) {
				throw new IllegalArgumentException("commands must be scripts or native, was " + this.commands);
			}
			this.redlock = Redlock.builder()
				.nodes(this.redis.uris())
				.settings(RedlockSettings.builder()
					.restartQuarantine(Duration.ZERO)
					.defaultTtl(Duration.ofSeconds(30))
					.nodeTimeout(Duration.ofSeconds(1))
					.build())
				.build();
			for (int i = 0; i < 100; i++) {
				lockUnlock(this, "warm-" + i);
			}
			this.redis.nodes().forEach((node) -> node.command("CONFIG", "RESETSTAT"));
			this.locks.reset();
		}

		@TearDown(Level.Trial)
		public void stop() {
			double usec = 0;
			for (RedisNode node : this.redis.nodes()) {
				usec += lockCommandMicros(node);
			}
			System.out.printf(Locale.ROOT,
					"%n[nodes] %s %s: %.2f µs of node time per lock+unlock on 5 nodes " + "(%d lock+unlocks)%n",
					this.server, this.commands, usec / this.locks.sum(), this.locks.sum());
			this.redlock.close();
			this.redis.close();
		}

		/** The node's {@code usec} over the lock commands since the counts were reset. */
		private static double lockCommandMicros(RedisNode node) {
			double usec = 0;
			for (Map.Entry<String, RedisNode.CommandStat> stat : node.commandStats().entrySet()) {
				usec += LOCK_COMMANDS.contains(stat.getKey()) ? stat.getValue().usec() : 0;
			}
			return usec;
		}

	}

	@Benchmark
	@BenchmarkMode(Mode.AverageTime)
	@Threads(1)
	public void lockUnlock(Nodes nodes, Keys keys) {
		lockUnlock(nodes, keys.next());
	}

	@Benchmark
	@BenchmarkMode(Mode.Throughput)
	@OutputTimeUnit(TimeUnit.SECONDS)
	@Threads(16)
	public void lockUnlock16(Nodes nodes, Keys keys) {
		lockUnlock(nodes, keys.next());
	}

	private static void lockUnlock(Nodes nodes, String key) {
		Lease lease = nodes.redlock.tryAcquire(key, LockUnlock.TTL)
			.orElseThrow(() -> new IllegalStateException("not acquired: " + key));
		if (lease.release() != ReleaseOutcome.RELEASED) {
			throw new IllegalStateException("not released: " + key);
		}
		nodes.locks.increment();
	}

}
