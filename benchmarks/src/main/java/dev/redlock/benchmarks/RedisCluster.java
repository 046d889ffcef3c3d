package dev.redlock.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNodes;

/**
 * The Redis nodes of one trial: {@code nodes} fresh, empty servers on loopback, started
 * by the test kit and stopped at the end of the trial. Every client in a benchmark talks
 * to these; with {@code slow} set, the clients reach one or two of them through a latency
 * proxy ({@value #SLOW_ONE_WAY_MILLIS} ms each way; the kit's unless
 * {@code redlock.bench.proxy} says otherwise), while the floor is still measured on the
 * direct nodes.
 */
@State(Scope.Benchmark)
public class RedisCluster {

	/** How many independent Redis masters. */
	@Param({ "1", "3", "5" })
	public int nodes;

	/**
	 * Which nodes the clients reach with {@value #SLOW_ONE_WAY_MILLIS} ms added each way:
	 * {@code first} (the first two in the node list), {@code last} (the last two),
	 * {@code one} (the first alone), or {@code none}.
	 */
	@Param({ "none" })
	public String slow;

	/** Added to each direction of a slow node's traffic: a 40 ms round trip. */
	static final long SLOW_ONE_WAY_MILLIS = 20;

	private RedisNodes redis;

	/**
	 * Which proxy makes a node slow, by the system property {@code redlock.bench.proxy}
	 * of the forked JVM: {@code kit} (the default: the test kit's {@link LatencyProxy},
	 * four threads per connection, which every figure so far was measured with) or
	 * {@code selector} ({@link SelectorDelayProxy}, one thread for all, which costs the
	 * client's cores less).
	 */
	private static final String PROXY = System.getProperty("redlock.bench.proxy", "kit");

	private final List<AutoCloseable> proxies = new ArrayList<>();

	private List<String> uris;

	@Setup(Level.Trial)
	public void start() {
		this.redis = RedisNodes.start(this.nodes);
		this.uris = new ArrayList<>(this.redis.uris());
		List<Integer> slowNodes = switch (this.slow) {
			case "none" -> List.of();
			case "first" -> List.of(0, 1);
			case "last" -> List.of(this.nodes - 2, this.nodes - 1);
			case "one" -> List.of(0);
			default -> throw new IllegalArgumentException("slow must be none, first, last or one, was " + this.slow);
		};
		Duration delay = Duration.ofMillis(SLOW_ONE_WAY_MILLIS);
		for (int node : slowNodes) {
			if (PROXY.equals("selector")) {
				SelectorDelayProxy proxy = SelectorDelayProxy.to(this.redis.node(node).host(),
						this.redis.node(node).port(), delay);
				this.proxies.add(proxy);
				this.uris.set(node, proxy.uri());
			}
			else {
				LatencyProxy proxy = LatencyProxy.to(this.redis.node(node), delay);
				this.proxies.add(proxy);
				this.uris.set(node, proxy.uri());
			}
		}
		System.out.println("# " + this.nodes + " Redis node(s), backend " + this.redis.backend() + ", "
				+ versionOf(this.redis) + ((slowNodes.isEmpty()) ? "" : ", nodes " + slowNodes + " "
						+ SLOW_ONE_WAY_MILLIS + " ms slower each way (" + PROXY + " proxy)"));
	}

	@TearDown(Level.Trial)
	public void stop() {
		for (AutoCloseable proxy : this.proxies) {
			try {
				proxy.close();
			}
			catch (Exception ex) {
				// stopping anyway
			}
		}
		this.proxies.clear();
		if (this.redis != null) {
			this.redis.close();
		}
	}

	/**
	 * The nodes' addresses as the clients reach them: through the latency proxy for the
	 * slow nodes.
	 * @return {@code redis://127.0.0.1:PORT} per node
	 */
	public List<String> uris() {
		return this.uris;
	}

	/**
	 * The nodes' own addresses, without any proxy: what the floor is measured on.
	 * @return {@code redis://127.0.0.1:PORT} per node
	 */
	public List<String> directUris() {
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
