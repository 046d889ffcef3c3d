package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;

import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With the default pool settings, more threads locking at once than a small idle limit
 * would keep reuse their connections: a connection given back is kept for the next round,
 * not closed only for another to be opened (with its {@code INFO} and script loads) a
 * moment later.
 */
@WithRedisNodes(count = 3)
class ConnectionReuseTests {

	private static final int THREADS = 24;

	@Test
	void threadsLockingAtOnceReuseTheConnectionsOpenedForThem(RedisNodes nodes) throws Exception {
		List<LatencyProxy> proxies = new ArrayList<>();
		List<String> uris = new ArrayList<>();
		try {
			for (int i = 0; i < nodes.size(); i++) {
				LatencyProxy proxy = LatencyProxy.to(nodes.node(i), Duration.ZERO);
				proxies.add(proxy);
				uris.add(proxy.uri());
			}
			// the default pool; a node timeout long enough for the first connections,
			// opened one after another by each node's connector
			RedlockSettings settings = TestSupport.SETTINGS.withNodeTimeout(Duration.ofSeconds(2));
			try (Redlock redlock = Redlock.builder().nodes(uris).settings(settings).build()) {
				lockAndUnlockFromEveryThread(redlock, "warm-up", 20);
				lockAndUnlockFromEveryThread(redlock, "reuse", 100);
				int opened = proxies.stream().mapToInt(LatencyProxy::acceptedConnections).sum();
				int closed = opened - proxies.stream().mapToInt(LatencyProxy::openConnections).sum();
				System.out.printf("[connection reuse] %d connections opened, %d of them closed, for %d lock+unlock%n",
						opened, closed, THREADS * 120);
				assertThat(closed).as("connections closed while %d threads locked over %d nodes", THREADS, nodes.size())
					.isLessThanOrEqualTo(THREADS / 4);
			}
		}
		finally {
			proxies.forEach(LatencyProxy::close);
		}
	}

	private static void lockAndUnlockFromEveryThread(Redlock redlock, String prefix, int times) throws Exception {
		ExecutorService threads = Executors.newFixedThreadPool(THREADS);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < THREADS; t++) {
				String keys = prefix + "-" + t + "-";
				done.add(threads.submit(() -> {
					for (int i = 0; i < times; i++) {
						redlock.acquire(keys + i, Duration.ofSeconds(10), Duration.ZERO).release();
					}
				}));
			}
			for (Future<?> thread : done) {
				thread.get();
			}
		}
		finally {
			threads.shutdownNow();
		}
	}

}
