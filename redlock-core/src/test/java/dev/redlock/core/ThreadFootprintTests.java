package dev.redlock.core;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.thread.OnDemandThread;
import dev.redlock.core.internal.thread.RenewalScheduler;
import dev.redlock.core.internal.transport.SharedConnection;
import dev.redlock.core.internal.waiting.NodeSubscriber;
import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code Redlock} over N nodes starts at most 4N + 2 threads, all daemons: per node,
 * the reader of its shared connection (the pipelined transport, from the start), and on
 * demand a connector while connections are being opened, a late-reply reader once a round
 * stops waiting for that node, and a release notice reader while threads wait for a lock
 * (and 30 s after); the renewal thread while leases are held (it renews, watches and lets
 * go of expired ones), and the loss-callback thread once the renewal thread finds a lease
 * lost. Closing it stops them all.
 */
@WithRedisNodes(count = 5)
class ThreadFootprintTests {

	@Test
	void atMostOneThreadPerNodeAndTwoMoreAllDaemonsAllStoppedByClose(RedisNodes nodes) throws Exception {
		Set<Thread> before = Thread.getAllStackTraces().keySet();
		List<Thread> started;
		RedlockSettings settings = TestSupport.SETTINGS.withNodeTimeout(Duration.ofSeconds(1));
		try (LatencyProxy slow = LatencyProxy.to(nodes.node(4), Duration.ZERO)) {
			List<String> uris = List.of(nodes.node(0).uri(), nodes.node(1).uri(), nodes.node(2).uri(),
					nodes.node(3).uri(), slow.uri());
			try (Redlock redlock = Redlock.builder().nodes(uris).settings(settings).build();
					Redlock competitor = Redlock.builder().nodes(uris).settings(settings).build()) {
				for (int i = 0; i < 50; i++) {
					redlock.acquire("footprint-" + i, Duration.ofSeconds(10), Duration.ZERO).release();
				}
				// every kind of work that may start a thread: renewal, a loss watch, a
				// lagging node, contention
				Lease renewed = redlock.acquire("renewed", Duration.ofMillis(300), Duration.ZERO).autoRenew();
				Lease watched = redlock.acquire("watched", Duration.ofSeconds(10), Duration.ZERO).onLost(() -> {
				});
				slow.delay(Duration.ofMillis(100));
				for (int i = 0; i < 3; i++) {
					redlock.acquire("lagging-" + i, Duration.ofSeconds(10), Duration.ZERO).release();
				}
				try (Lease held = competitor.acquire("contended", Duration.ofSeconds(10), Duration.ZERO)) {
					assertThat(redlock.tryAcquire("contended", Duration.ofSeconds(10))).isEmpty();
				}
				Lease taken = competitor.acquire("waited-for", Duration.ofSeconds(10), Duration.ZERO);
				TestThreads.Running<Lease> waiting = TestThreads.start(false,
						() -> redlock.acquire("waited-for", Duration.ofSeconds(10), Duration.ofSeconds(10)));
				TestSupport.awaitTrue("a thread waits", Duration.ofSeconds(5), () -> redlock.waitingThreads() == 1);
				taken.release();
				waiting.await(Duration.ofSeconds(10)).release();
				renewed.release();
				watched.release();

				started = newThreadsSince(before);
				System.out.printf("threads started by two Redlocks over %d nodes: %s%n", nodes.size(),
						started.stream().map(Thread::getName).sorted().toList());
				assertThat(started).allSatisfy((thread) -> assertThat(thread.isDaemon()).isTrue());
				assertThat(started).extracting(Thread::getName)
					.allSatisfy((name) -> assertThat(name).startsWith("redlock-"))
					.anySatisfy((name) -> assertThat(name).startsWith(RenewalScheduler.THREAD_NAME_PREFIX))
					.anySatisfy((name) -> assertThat(name).startsWith(NodeSubscriber.THREAD_NAME_PREFIX))
					.noneSatisfy((name) -> assertThat(name).startsWith("test-platform-thread"));
				// a round over pooled connections hands a slow node's reply to a
				// late-reply
				// thread; over shared ones the node's reader reads it
				assertThat(started).extracting(Thread::getName)
					.anySatisfy((name) -> assertThat(name)
						.startsWith((settings.transport() == RedlockSettings.Transport.SHARED) ? SharedConnection.READER
								: OnDemandThread.LATE_REPLIES));
				// two instances: each at most a shared connection's reader and writer, a
				// connector, a late-reply reader and a notice reader per node, one
				// renewal and one loss-callback thread
				assertThat(started).hasSizeLessThanOrEqualTo(2 * (5 * nodes.size() + 2));
				assertThat(started.stream().filter((thread) -> thread.getName().startsWith("redlock-connect-")))
					.hasSizeLessThanOrEqualTo(2 * nodes.size());
			}
		}
		TestSupport.awaitTrue("closing stops every thread the instances started", Duration.ofSeconds(5),
				() -> started.stream().noneMatch(Thread::isAlive));
	}

	/** Threads alive now that were not before, other than the latency proxy's. */
	private static List<Thread> newThreadsSince(Set<Thread> before) {
		Set<Thread> now = new HashSet<>(Thread.getAllStackTraces().keySet());
		now.removeAll(before);
		return now.stream()
			.filter(Thread::isAlive)
			.filter((thread) -> !thread.getName().contains("proxy") && !thread.getName().startsWith("test-"))
			.toList();
	}

}
