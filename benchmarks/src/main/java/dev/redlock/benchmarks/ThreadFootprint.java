package dev.redlock.benchmarks;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.redisson.Redisson;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import dev.redlock.core.Lease;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockSettings;
import dev.redlock.test.RedisNodes;

/**
 * Counts the threads each client starts to lock and unlock over 5 nodes: our
 * {@link Redlock} and Redisson's {@code RedissonRedLock} (one client per node, as its
 * documentation builds it). Not a JMH benchmark: run it with
 * {@code java -cp benchmarks/target/benchmarks.jar dev.redlock.benchmarks.ThreadFootprint}.
 */
public final class ThreadFootprint {

	private static final int NODES = 5;

	private ThreadFootprint() {
	}

	public static void main(String[] args) throws Exception {
		try (RedisNodes redis = RedisNodes.start(NODES)) {
			List<String> uris = redis.uris();

			Set<Thread> before = Set.copyOf(Thread.getAllStackTraces().keySet());
			try (Redlock redlock = Redlock.builder()
				.nodes(uris)
				.settings(RedlockSettings.defaults().withRestartQuarantine(Duration.ZERO))
				.build()) {
				for (int i = 0; i < 100; i++) {
					redlock.tryAcquire("footprint:" + i, Duration.ofSeconds(10)).ifPresent(Lease::release);
				}
				// a renewed lease starts the renewal thread, the one thread a Redlock
				// keeps
				redlock.acquire("footprint:renewed", Duration.ofSeconds(3), Duration.ZERO).autoRenew().release();
				report("redlock (this library)", before);
			}

			before = Set.copyOf(Thread.getAllStackTraces().keySet());
			RedissonClient[] clients = new RedissonClient[NODES];
			for (int i = 0; i < NODES; i++) {
				Config config = new Config();
				config.useSingleServer().setAddress(uris.get(i));
				clients[i] = Redisson.create(config);
			}
			try {
				for (int i = 0; i < 100; i++) {
					RLock[] locks = new RLock[NODES];
					for (int n = 0; n < NODES; n++) {
						locks[n] = clients[n].getLock("footprint:" + i);
					}
					@SuppressWarnings("deprecation")
					RedissonRedLock lock = new RedissonRedLock(locks);
					if (lock.tryLock(0, 10_000, TimeUnit.MILLISECONDS)) {
						lock.unlock();
					}
				}
				report("Redisson RedissonRedLock (" + NODES + " clients)", before);
			}
			finally {
				for (RedissonClient client : clients) {
					client.shutdown();
				}
			}
		}
	}

	/**
	 * Prints how many threads were started since {@code before} and are still alive,
	 * grouped by name.
	 */
	private static void report(String client, Set<Thread> before) {
		Set<Thread> started = new HashSet<>(Thread.getAllStackTraces().keySet());
		started.removeAll(before);
		started.removeIf((thread) -> !thread.isAlive());
		Map<String, Integer> byName = new TreeMap<>();
		for (Thread thread : started) {
			byName.merge(thread.getName().replaceAll("[0-9]+", "N"), 1, Integer::sum);
		}
		System.out.printf("%s over %d nodes: %d threads alive after 100 lock+unlocks %s%n", client, NODES,
				started.size(), byName);
	}

}
