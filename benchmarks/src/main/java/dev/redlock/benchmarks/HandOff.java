package dev.redlock.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.redisson.Redisson;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import dev.redlock.core.LockRequest;
import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockSettings;
import dev.redlock.test.RedisNodes;

/**
 * Waiting for one busy lock, as users of {@code waitTime} do: 16 threads loop on ONE key
 * {acquire, waiting up to 5 s, TTL 10 s; hold 2 ms; release}, with one client instance,
 * or with two instances of 8 threads (two application instances). Compares our
 * {@link Redlock} with Redisson, measured in the same run: Redisson's
 * {@code RedissonRedLock} over one client per node on 5 nodes, its {@code RLock} on 1
 * node; both wake waiters on release by pub/sub.
 *
 * <p>
 * Reports acquisitions per second, the wait (the time an acquire call took) at p50, p99
 * and max, Jain's fairness index over the threads' acquisition counts (1 when all are
 * equal), and the slowest thread's rate against the mean thread's. Each configuration
 * runs {@value #ROUNDS} times, interleaved with the others, and the median of each figure
 * is shown. Not a JMH benchmark (JMH times one operation; this is about how threads share
 * one lock); run it with
 * {@code java -cp benchmarks/target/benchmarks.jar dev.redlock.benchmarks.HandOff [seconds per run]}.
 */
public final class HandOff {

	private static final int ROUNDS = 5;

	private static final int THREADS = 16;

	private static final long HOLD_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

	private static final long WAIT_MILLIS = 5_000;

	private static final long TTL_MILLIS = 10_000;

	private static final String KEY = "bench:hand-off";

	private HandOff() {
	}

	public static void main(String[] args) throws Exception {
		double seconds = (args.length > 0) ? Double.parseDouble(args[0]) : 3;
		long runNanos = (long) (seconds * 1e9);
		List<String> table = new ArrayList<>();
		table.add(
				"| client | nodes | instances × threads | acq/s | wait p50 | wait p99 | wait max | Jain | slowest / mean thread | timeouts |");
		table.add("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|");
		for (int nodeCount : new int[] { 5, 1 }) {
			try (RedisNodes nodes = RedisNodes.start(nodeCount)) {
				List<Client> clients = List.of(new Ours(nodes, 1), new Redissons(nodes, 1), new Ours(nodes, 2),
						new Redissons(nodes, 2));
				List<List<Result>> results = new ArrayList<>();
				clients.forEach((client) -> results.add(new ArrayList<>()));
				try {
					for (Client client : clients) {
						// warm-up: connections, JIT, subscriptions
						run(client, TimeUnit.MILLISECONDS.toNanos(500));
					}
					for (int round = 0; round < ROUNDS; round++) {
						for (int i = 0; i < clients.size(); i++) {
							Result result = run(clients.get(i), runNanos);
							results.get(i).add(result);
							System.out.printf(Locale.ROOT, "round %d, %s, %d node(s): %s%n", round + 1,
									clients.get(i).name(), nodeCount, result);
						}
					}
				}
				finally {
					for (Client client : clients) {
						client.close();
					}
				}
				for (int i = 0; i < clients.size(); i++) {
					table.add(Result.median(results.get(i)).row(clients.get(i), nodeCount));
				}
				for (int instances = 1; instances <= 2; instances++) {
					Result ours = Result.median(results.get((instances == 1) ? 0 : 2));
					Result theirs = Result.median(results.get((instances == 1) ? 1 : 3));
					System.out.printf(Locale.ROOT,
							"%d node(s), %d instance(s): acq/s %.2fx Redisson's, wait p99 %.2fx%n", nodeCount,
							instances, ours.perSecond / theirs.perSecond, ours.p99 / theirs.p99);
				}
			}
		}
		System.out.println();
		table.forEach(System.out::println);
	}

	private static Result run(Client client, long runNanos) throws InterruptedException {
		int instances = client.instances();
		AtomicBoolean measuring = new AtomicBoolean();
		AtomicBoolean stop = new AtomicBoolean();
		AtomicInteger holders = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		AtomicInteger timeouts = new AtomicInteger();
		long[][] waits = new long[THREADS][];
		int[] counts = new int[THREADS];
		CountDownLatch done = new CountDownLatch(THREADS);
		List<Thread> threads = new ArrayList<>();
		for (int t = 0; t < THREADS; t++) {
			int index = t;
			int instance = t % instances;
			Thread thread = new Thread(() -> {
				long[] mine = new long[1024];
				int n = 0;
				try {
					while (!stop.get()) {
						long start = System.nanoTime();
						AutoCloseable held = client.acquire(instance);
						long waited = System.nanoTime() - start;
						if (held == null) {
							timeouts.incrementAndGet();
							continue;
						}
						if (holders.incrementAndGet() != 1) {
							overlaps.incrementAndGet();
						}
						hold();
						holders.decrementAndGet();
						held.close();
						if (measuring.get()) {
							if (n == mine.length) {
								mine = Arrays.copyOf(mine, n * 2);
							}
							mine[n++] = waited;
						}
					}
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
				finally {
					waits[index] = Arrays.copyOf(mine, n);
					counts[index] = n;
					done.countDown();
				}
			}, "hand-off-" + t);
			threads.add(thread);
			thread.start();
		}
		// let the threads queue up before measuring
		LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
		measuring.set(true);
		long start = System.nanoTime();
		LockSupport.parkNanos(runNanos);
		measuring.set(false);
		long elapsed = System.nanoTime() - start;
		stop.set(true);
		if (!done.await(2 * WAIT_MILLIS + 10_000, TimeUnit.MILLISECONDS)) {
			throw new IllegalStateException("threads did not stop");
		}
		if (overlaps.get() != 0) {
			throw new IllegalStateException(client.name() + ": two holders at once, " + overlaps.get() + " times");
		}
		return Result.of(waits, counts, elapsed, timeouts.get());
	}

	/**
	 * The work done under the lock: 2 ms, however often the park returns early (it may,
	 * spuriously).
	 */
	private static void hold() {
		long end = System.nanoTime() + HOLD_NANOS;
		for (long left = HOLD_NANOS; left > 0; left = end - System.nanoTime()) {
			LockSupport.parkNanos(left);
		}
	}

	/**
	 * One client configuration: one or two instances, each acquiring and releasing the
	 * one key.
	 */
	private interface Client extends AutoCloseable {

		String name();

		int instances();

		/**
		 * Acquires, waiting up to 5 s; returns what releases it, or {@code null} when the
		 * wait timed out.
		 */
		AutoCloseable acquire(int instance) throws Exception;

		@Override
		void close();

	}

	private static final class Ours implements Client {

		private final List<Redlock> redlocks = new ArrayList<>();

		Ours(RedisNodes nodes, int instances) {
			for (int i = 0; i < instances; i++) {
				this.redlocks.add(Redlock.builder()
					.nodes(nodes.uris())
					.settings(RedlockSettings.defaults()
						.toBuilder()
						.restartQuarantine(Duration.ZERO)
						.nodeTimeout(Duration.ofSeconds(1))
						.transport(Transports.chosen())
						.build())
					.build());
			}
		}

		@Override
		public String name() {
			return "this project";
		}

		@Override
		public int instances() {
			return this.redlocks.size();
		}

		@Override
		public AutoCloseable acquire(int instance) {
			try {
				Lease lease = this.redlocks.get(instance)
					.acquire(LockRequest.of(KEY, Duration.ofMillis(TTL_MILLIS)).named("hand-off"),
							Duration.ofMillis(WAIT_MILLIS));
				return lease::release;
			}
			catch (LockNotAcquiredException ex) {
				return null;
			}
		}

		@Override
		public void close() {
			this.redlocks.forEach(Redlock::close);
		}

	}

	private static final class Redissons implements Client {

		private final List<RedissonClient[]> instances = new ArrayList<>();

		Redissons(RedisNodes nodes, int instances) {
			for (int i = 0; i < instances; i++) {
				RedissonClient[] clients = new RedissonClient[nodes.size()];
				for (int n = 0; n < clients.length; n++) {
					Config config = new Config();
					config.useSingleServer().setAddress(nodes.uris().get(n));
					clients[n] = Redisson.create(config);
				}
				this.instances.add(clients);
			}
		}

		@Override
		public String name() {
			return (this.instances.get(0).length == 1) ? "Redisson RLock" : "Redisson RedissonRedLock";
		}

		@Override
		public int instances() {
			return this.instances.size();
		}

		@Override
		@SuppressWarnings("deprecation")
		public AutoCloseable acquire(int instance) throws InterruptedException {
			RedissonClient[] clients = this.instances.get(instance);
			RLock lock;
			if (clients.length == 1) {
				lock = clients[0].getLock(KEY);
			}
			else {
				RLock[] locks = new RLock[clients.length];
				for (int i = 0; i < locks.length; i++) {
					locks[i] = clients[i].getLock(KEY);
				}
				lock = new RedissonRedLock(locks);
			}
			if (!lock.tryLock(WAIT_MILLIS, TTL_MILLIS, TimeUnit.MILLISECONDS)) {
				return null;
			}
			return lock::unlock;
		}

		@Override
		public void close() {
			for (RedissonClient[] clients : this.instances) {
				for (RedissonClient client : clients) {
					client.shutdown();
				}
			}
		}

	}

	/** The figures of one run. */
	private record Result(double perSecond, double p50, double p99, double max, double jain, double slowestToMean,
			int timeouts) {

		static Result of(long[][] waits, int[] counts, long elapsedNanos, int timeouts) {
			long[] all = Arrays.stream(waits).flatMapToLong(Arrays::stream).sorted().toArray();
			double total = Arrays.stream(counts).sum();
			double squares = Arrays.stream(counts).mapToDouble((c) -> (double) c * c).sum();
			double mean = total / counts.length;
			int slowest = Arrays.stream(counts).min().orElse(0);
			return new Result(total / (elapsedNanos / 1e9), millis(percentile(all, 0.50)),
					millis(percentile(all, 0.99)), millis((all.length == 0) ? 0 : all[all.length - 1]),
					(squares == 0) ? 0 : total * total / (counts.length * squares), (mean == 0) ? 0 : slowest / mean,
					timeouts);
		}

		static Result median(List<Result> results) {
			return new Result(median(results, Result::perSecond), median(results, Result::p50),
					median(results, Result::p99), median(results, Result::max), median(results, Result::jain),
					median(results, Result::slowestToMean),
					(int) median(results, (result) -> (double) result.timeouts()));
		}

		private static double median(List<Result> results, java.util.function.ToDoubleFunction<Result> figure) {
			double[] values = results.stream().mapToDouble(figure).sorted().toArray();
			return values[values.length / 2];
		}

		private static long percentile(long[] sorted, double fraction) {
			if (sorted.length == 0) {
				return 0;
			}
			return sorted[Math.min(sorted.length - 1, (int) Math.ceil(fraction * sorted.length) - 1)];
		}

		private static double millis(long nanos) {
			return nanos / 1e6;
		}

		String row(Client client, int nodes) {
			return String.format(Locale.ROOT,
					"| %s | %d | %d × %d | %.0f | %.2f ms | %.0f ms | %.0f ms | %.2f | %.2f | %d |", client.name(),
					nodes, client.instances(), THREADS / client.instances(), this.perSecond, this.p50, this.p99,
					this.max, this.jain, this.slowestToMean, this.timeouts);
		}

		@Override
		public String toString() {
			return String.format(Locale.ROOT,
					"%.0f acq/s, wait p50 %.2f ms, p99 %.1f ms, max %.1f ms, Jain %.3f, slowest/mean %.2f, timeouts %d",
					this.perSecond, this.p50, this.p99, this.max, this.jain, this.slowestToMean, this.timeouts);
		}

	}

}
