package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With the default pool settings, more threads locking at once than a small idle limit
 * would keep reuse their connections, and a burst of them on a cold {@code Redlock} is
 * served by the first connections as they come back. Every node is reached through a
 * proxy that counts the connections.
 */
@WithRedisNodes(count = 3)
class ConnectionReuseTests {

	private static final int THREADS = 24;

	/**
	 * Long enough for any first connection, and for any reply on a busy machine, where 24
	 * threads and the proxies' four threads per connection wait for CPUs: a reply that
	 * times out closes its connection, which is not the churn counted here.
	 */
	private static final Duration NODE_TIMEOUT = Duration.ofSeconds(5);

	private final List<LatencyProxy> proxies = new ArrayList<>();

	@AfterEach
	void closeProxies() {
		this.proxies.forEach(LatencyProxy::close);
	}

	/**
	 * A connection given back is kept for the next round, not closed only for another to
	 * be opened (with its {@code INFO} and script loads) a moment later.
	 */
	@Test
	void threadsLockingAtOnceReuseTheConnectionsOpenedForThem(RedisNodes nodes) throws Exception {
		// the default pool
		RedlockSettings settings = TestSupport.SETTINGS.withNodeTimeout(NODE_TIMEOUT);
		try (Redlock redlock = Redlock.builder().nodes(proxiedUris(nodes)).settings(settings).build()) {
			lockAndUnlockFromEveryThread(redlock, "warm-up", 20);
			lockAndUnlockFromEveryThread(redlock, "reuse", 100);
			int opened = this.proxies.stream().mapToInt(LatencyProxy::acceptedConnections).sum();
			int closed = opened - this.proxies.stream().mapToInt(LatencyProxy::openConnections).sum();
			System.out.printf("[connection reuse] %d connections opened, %d of them closed, for %d lock+unlock%n",
					opened, closed, THREADS * 120);
			assertThat(closed).as("connections closed while %d threads locked over %d nodes", THREADS, nodes.size())
				.isLessThanOrEqualTo(THREADS / 4);
		}
	}

	/**
	 * The connections are opened one after another by each node's connector, but every
	 * connection given back goes to a thread still waiting for one, so no thread waits
	 * for its own to open: at most one connection per thread and node, besides those the
	 * pool opens in advance.
	 */
	@Test
	void aBurstOfThreadsOnAColdRedlockIsServedByTheFirstConnections(RedisNodes nodes) throws Exception {
		RedlockSettings settings = TestSupport.SETTINGS.withNodeTimeout(NODE_TIMEOUT);
		try (Redlock redlock = Redlock.builder().nodes(proxiedUris(nodes)).settings(settings).build()) {
			lockAndUnlockFromEveryThread(redlock, "cold", 5);
		}
		int opened = this.proxies.stream().mapToInt(LatencyProxy::acceptedConnections).sum();
		assertThat(opened).as("connections opened for %d threads", THREADS)
			.isLessThanOrEqualTo((THREADS + settings.poolMinIdle()) * nodes.size());
	}

	/** The nodes' addresses through counting proxies. */
	private List<String> proxiedUris(RedisNodes nodes) {
		List<String> uris = new ArrayList<>();
		for (int i = 0; i < nodes.size(); i++) {
			LatencyProxy proxy = LatencyProxy.to(nodes.node(i), Duration.ZERO);
			this.proxies.add(proxy);
			uris.add(proxy.uri());
		}
		return uris;
	}

	/** Every thread locks and unlocks keys of its own; any failure fails the test. */
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
