package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a service does in its first second after a deploy, run in a JVM of its own so that
 * nothing is loaded or compiled yet: a {@code Redlock} with the default settings is
 * built, and at once a burst of threads each makes a single attempt (wait 0) on a key of
 * its own, while busy threads load the CPU. Prints how many acquired and why the others
 * did not; exits with 0 only when every attempt acquired.
 *
 * <p>
 * Arguments: the number of threads, the number of busy threads, then the node URIs.
 */
final class ColdBurst {

	private ColdBurst() {
	}

	public static void main(String[] args) throws Exception {
		int threads = Integer.parseInt(args[0]);
		int busy = Integer.parseInt(args[1]);
		List<String> nodes = List.of(args).subList(2, args.length);
		AtomicInteger spin = new AtomicInteger();
		for (int i = 0; i < busy; i++) {
			Thread hog = new Thread(() -> {
				while (true) {
					spin.incrementAndGet();
				}
			}, "cpu-hog-" + i);
			hog.setDaemon(true);
			hog.start();
		}
		// the nodes were started a moment ago: the restart quarantine would refuse them
		// all
		RedlockSettings settings = RedlockSettings.defaults().withRestartQuarantine(Duration.ZERO);
		AtomicInteger acquired = new AtomicInteger();
		Map<String, Integer> failures = new ConcurrentHashMap<>();
		CountDownLatch start = new CountDownLatch(1);
		List<Thread> burst = new ArrayList<>(threads);
		// the nodes' answers that were not grants, from the build on: printed when an
		// attempt failed, to tell a cold client from a slow node
		long built = System.nanoTime();
		Queue<String> refusals = new ConcurrentLinkedQueue<>();
		RedlockListener notesRefusals = new RedlockListener() {
			@Override
			public void nodeRequestFinished(NodeRequestEvent event) {
				if (event.outcome() != NodeOutcome.OK) {
					refusals.add(String.format("%s %s after %d ms (at %d ms)", event.node(), event.outcome().tag(),
							event.duration().toMillis(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - built)));
				}
			}
		};
		List<Integer> idle = new ArrayList<>();
		try (Redlock redlock = Redlock.builder().nodes(nodes).settings(settings).listener(notesRefusals).build()) {
			for (int i = 0; i < threads; i++) {
				String resource = "cold-burst-" + i;
				Thread thread = new Thread(() -> {
					try {
						start.await();
						try (Lease lease = redlock.acquire(resource, Duration.ofSeconds(10), Duration.ZERO)) {
							acquired.incrementAndGet();
						}
					}
					catch (LockNotAcquiredException ex) {
						// the message names the resource: keep what the attempts share
						String message = ex.getMessage();
						String why = message.substring(message.indexOf(resource) + resource.length());
						failures.merge(ex.reason() + why, 1, Integer::sum);
					}
					catch (Throwable ex) {
						failures.merge(ex.toString(), 1, Integer::sum);
					}
				}, "burst-" + i);
				thread.start();
				burst.add(thread);
			}
			start.countDown();
			for (Thread thread : burst) {
				thread.join();
			}
			for (int i = 0; i < nodes.size(); i++) {
				idle.add(redlock.internals().idleConnections(i));
			}
		}
		System.out.printf("acquired %d of %d%n", acquired.get(), threads);
		new TreeMap<>(failures).forEach((failure, count) -> System.out.printf("%d x %s%n", count, failure));
		if (acquired.get() != threads) {
			System.out.printf("idle connections per node after the burst: %s%n", idle);
			refusals.forEach((refusal) -> System.out.printf("node request: %s%n", refusal));
		}
		System.exit((acquired.get() == threads) ? 0 : 1);
	}

}
