package dev.redlock.benchmarks;

import java.util.List;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import dev.redlock.test.RedisNodes;

/**
 * The Redis nodes of one trial: {@code nodes} fresh, empty servers on loopback, started by the test kit and stopped
 * at the end of the trial. Every client in a benchmark talks to these.
 */
@State(Scope.Benchmark)
public class RedisCluster {

	/** How many independent Redis masters. */
	@Param({ "1", "3", "5" })
	public int nodes;

	private RedisNodes redis;

	@Setup(Level.Trial)
	public void start() {
		this.redis = RedisNodes.start(this.nodes);
		System.out.println("# " + this.nodes + " Redis node(s), backend " + this.redis.backend() + ", "
				+ versionOf(this.redis));
	}

	@TearDown(Level.Trial)
	public void stop() {
		if (this.redis != null) {
			this.redis.close();
		}
	}

	/**
	 * The nodes' addresses.
	 * @return {@code redis://127.0.0.1:PORT} per node
	 */
	public List<String> uris() {
		return this.redis.uris();
	}

	private static String versionOf(RedisNodes redis) {
		String info = redis.node(0).command("INFO", "server");
		if (info != null) {
			for (String line : info.split("\r?\n")) {
				if (line.startsWith("redis_version:")) {
					return "Redis " + line.substring("redis_version:".length()).trim();
				}
			}
		}
		return "Redis version unknown";
	}

}
