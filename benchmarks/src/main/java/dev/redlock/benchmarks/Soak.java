package dev.redlock.benchmarks;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.LockRequest;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockFootprint;
import dev.redlock.core.RedlockSettings;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;

/**
 * A long run of two {@link Redlock}s over five real nodes while the nodes fail, to show
 * that nothing grows without bound and no call overruns its bound. Threads lock distinct
 * keys, contend for two hot keys with a wait time, take fenced and renewed leases; the
 * nodes are killed and restarted, frozen for longer than the node timeout (with waiters
 * parked on other keys), and at two thirds of the run one is killed and left dead. Every
 * report interval it prints heap after GC, live threads, connections per node (as the
 * nodes count them), queued clean-ups, scheduled tasks, operations per second and
 * failures by reason. At the end it checks that no lock key is left on any node once the
 * longest TTL has passed.
 *
 * <p>
 * Exits with 1 when a figure of the last third of the run stands above the middle third's
 * beyond noise (a trend), a call overran its bound, a fencing token went backwards, or a
 * key was left; else 0.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.redlock.benchmarks.Soak [--seconds 600] [--report-seconds 30]
 * </pre>
 */
public final class Soak {

	private static final Duration TTL = Duration.ofSeconds(5);

	private static final Duration WAIT = Duration.ofSeconds(1);

	private static final String CLIENT_NAME = "redlock-soak";

	/**
	 * What a call may take beyond its own bound ({@code waitTime + 2 x node timeout}) on
	 * a loaded 2-core machine before it counts as an overrun.
	 */
	private static final Duration SLACK = Duration.ofSeconds(1);

	private final RedisNodes nodes;

	private final Redlock a;

	private final Redlock b;

	private final AtomicBoolean running = new AtomicBoolean(true);

	private final LongAdder operations = new LongAdder();

	private final Map<String, LongAdder> failures = new ConcurrentHashMap<>();

	private final List<String> overruns = java.util.Collections.synchronizedList(new ArrayList<>());

	private final AtomicLong lastToken = new AtomicLong();

	private final AtomicLong tokenInversions = new AtomicLong();

	private Soak(RedisNodes nodes, RedlockSettings settings) {
		this.nodes = nodes;
		this.a = Redlock.builder().nodes(nodes.uris()).settings(settings).build();
		this.b = Redlock.builder().nodes(nodes.uris()).settings(settings).build();
	}

	public static void main(String[] args) throws Exception {
		long seconds = 600;
		long reportSeconds = 30;
		for (int i = 0; i + 1 < args.length; i += 2) {
			switch (args[i]) {
				case "--seconds" -> seconds = Long.parseLong(args[i + 1]);
				case "--minutes" -> seconds = 60 * Long.parseLong(args[i + 1]);
				case "--report-seconds" -> reportSeconds = Long.parseLong(args[i + 1]);
				default -> throw new IllegalArgumentException(
						"unknown option " + args[i] + "; use --seconds N, --minutes N, --report-seconds N");
			}
		}
		RedlockSettings settings = RedlockSettings.builder()
			.restartQuarantine(TTL)
			.defaultTtl(TTL)
			.clientName(CLIENT_NAME)
			.build();
		int status;
		try (RedisNodes nodes = RedisNodes.start(5)) {
			status = new Soak(nodes, settings).run(Duration.ofSeconds(seconds), Duration.ofSeconds(reportSeconds));
		}
		System.exit(status);
	}

	private int run(Duration length, Duration reportEvery) throws InterruptedException {
		System.out.printf("soak: %d s on %d nodes (%s), report every %d s%n", length.toSeconds(), this.nodes.size(),
				this.nodes.backend(), reportEvery.toSeconds());
		List<Thread> threads = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			String prefix = "distinct-" + i + "-";
			threads.add(worker("distinct-" + i, (n) -> lockOnce(this.a, LockRequest.of(prefix + (n % 64), TTL), WAIT)));
		}
		for (int i = 0; i < 4; i++) {
			Redlock client = (i % 2 == 0) ? this.a : this.b;
			String key = "hot-" + (i / 2);
			threads.add(worker("contending-" + i, (n) -> lockOnce(client, LockRequest.of(key, TTL), WAIT)));
		}
		threads.add(worker("fenced", (n) -> fencedOnce()));
		threads.add(worker("renewed", (n) -> renewedOnce()));
		threads.forEach(Thread::start);
		Thread faults = new Thread(() -> injectFaults(length), "soak-faults");
		faults.setDaemon(true);
		faults.start();

		List<Sample> samples = new ArrayList<>();
		long start = System.nanoTime();
		long end = start + length.toNanos();
		long lastOps = 0;
		long lastAt = start;
		while (System.nanoTime() - end < 0) {
			long next = Math.min(end, System.nanoTime() + reportEvery.toNanos());
			while (System.nanoTime() - next < 0) {
				LockSupport.parkNanos(next - System.nanoTime());
			}
			long now = System.nanoTime();
			long ops = this.operations.sum();
			Sample sample = sample((now - start) / 1_000_000_000L, (ops - lastOps) * 1e9 / (now - lastAt));
			samples.add(sample);
			System.out.println(sample);
			lastOps = ops;
			lastAt = now;
		}
		this.running.set(false);
		for (Thread thread : threads) {
			thread.join(WAIT.plus(TTL).toMillis() * 2);
		}
		faults.join(TTL.toMillis() * 2);
		heal();
		this.a.close();
		this.b.close();
		return verdict(samples);
	}

	/** A thread that repeats one operation until the run ends. */
	private Thread worker(String name, Operation operation) {
		Thread thread = new Thread(() -> {
			long n = 0;
			while (this.running.get()) {
				try {
					operation.run(n++);
				}
				catch (RuntimeException ex) {
					this.failures.computeIfAbsent(ex.getClass().getSimpleName(), (key) -> new LongAdder()).increment();
				}
			}
		}, "soak-" + name);
		thread.setDaemon(true);
		return thread;
	}

	@FunctionalInterface
	private interface Operation {

		void run(long n);

	}

	private void lockOnce(Redlock client, LockRequest request, Duration wait) {
		long start = System.nanoTime();
		try {
			Lease lease = client.acquire(request, wait);
			LockSupport.parkNanos(Duration.ofMillis(2).toNanos());
			lease.release();
			this.operations.increment();
		}
		catch (LockNotAcquiredException ex) {
			this.failures.computeIfAbsent(ex.reason().name(), (key) -> new LongAdder()).increment();
		}
		finally {
			checkBound(request.resource(), start, wait, client.settings());
		}
	}

	private void fencedOnce() {
		long start = System.nanoTime();
		try (Lease lease = this.a.acquire(LockRequest.of("fenced", TTL).fenced(), WAIT)) {
			long token = lease.fencingToken().orElseThrow();
			long previous = this.lastToken.getAndAccumulate(token, Math::max);
			if (token <= previous) {
				this.tokenInversions.incrementAndGet();
			}
			this.operations.increment();
		}
		catch (LockNotAcquiredException ex) {
			this.failures.computeIfAbsent("fenced " + ex.reason().name(), (key) -> new LongAdder()).increment();
		}
		finally {
			checkBound("fenced", start, WAIT, this.a.settings());
		}
	}

	private void renewedOnce() {
		try {
			Lease lease = this.b.acquire(LockRequest.of("renewed", Duration.ofSeconds(1)), WAIT)
				.autoRenew(Duration.ofSeconds(3));
			long end = System.nanoTime() + Duration.ofSeconds(2).toNanos();
			while (System.nanoTime() - end < 0 && this.running.get()) {
				LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
			}
			if (lease.isLost()) {
				this.failures.computeIfAbsent("renewed lease lost", (key) -> new LongAdder()).increment();
			}
			lease.release();
			this.operations.increment();
		}
		catch (LockNotAcquiredException ex) {
			this.failures.computeIfAbsent("renewed " + ex.reason().name(), (key) -> new LongAdder()).increment();
		}
	}

	private void checkBound(String what, long start, Duration wait, RedlockSettings settings) {
		Duration took = Duration.ofNanos(System.nanoTime() - start);
		Duration bound = wait.plus(settings.nodeTimeout().multipliedBy(2)).plus(SLACK);
		if (took.compareTo(bound) > 0) {
			this.overruns.add(what + " took " + took.toMillis() + " ms, bound " + bound.toMillis() + " ms");
		}
	}

	/**
	 * In cycles: a node killed and restarted empty, a node frozen for longer than the
	 * node timeout; from two thirds of the run, node 4 is dead for good.
	 */
	private void injectFaults(Duration length) {
		long start = System.nanoTime();
		long deadForGoodAt = start + length.toNanos() * 2 / 3;
		Duration cycle = Duration.ofSeconds(Math.max(20, length.toSeconds() / 6));
		int victim = 0;
		boolean fourDead = false;
		while (this.running.get()) {
			if (!fourDead && System.nanoTime() - deadForGoodAt >= 0) {
				this.nodes.node(4).kill();
				fourDead = true;
				System.out.println("fault: node 4 killed for good");
			}
			RedisNode killed = this.nodes.node(victim % 4);
			killed.kill();
			System.out.println("fault: node " + (victim % 4) + " killed");
			if (!pause(cycle.dividedBy(4))) {
				killed.restart();
				break;
			}
			killed.restart();
			System.out.println("fault: node " + (victim % 4) + " restarted empty");
			RedisNode frozen = this.nodes.node((victim + 1) % 4);
			frozen.pause();
			System.out.println("fault: node " + ((victim + 1) % 4) + " frozen");
			boolean goOn = pause(cycle.dividedBy(3));
			frozen.resume();
			System.out.println("fault: node " + ((victim + 1) % 4) + " resumed");
			if (!goOn || !pause(cycle.dividedBy(3))) {
				break;
			}
			victim++;
		}
	}

	/** Waits while the run goes on; returns whether it still does. */
	private boolean pause(Duration duration) {
		long end = System.nanoTime() + duration.toNanos();
		while (this.running.get() && System.nanoTime() - end < 0) {
			LockSupport.parkNanos(Math.min(Duration.ofMillis(100).toNanos(), end - System.nanoTime()));
		}
		return this.running.get();
	}

	/** Brings every node back, so that what is left on them can be counted. */
	private void heal() {
		for (RedisNode node : this.nodes.nodes()) {
			if (node.isPaused()) {
				node.resume();
			}
			if (!node.isRunning()) {
				node.restart();
			}
		}
	}

	private Sample sample(long second, double opsPerSecond) {
		System.gc();
		long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
		int threads = ManagementFactory.getThreadMXBean().getThreadCount();
		List<Integer> serverSide = new ArrayList<>();
		for (RedisNode node : this.nodes.nodes()) {
			serverSide.add(connectionsSeenBy(node));
		}
		RedlockFootprint fa = this.a.footprint();
		RedlockFootprint fb = this.b.footprint();
		Map<String, Long> byReason = new TreeMap<>();
		this.failures.forEach((reason, count) -> byReason.put(reason, count.sumThenReset()));
		return new Sample(second, heap, threads, serverSide, fa.totalConnections() + fb.totalConnections(),
				fa.queuedCleanups() + fb.queuedCleanups(), fa.scheduledTasks() + fb.scheduledTasks(),
				fa.waitingThreads() + fb.waitingThreads(), opsPerSecond, byReason);
	}

	/** Connections a node counts from this run's clients, -1 when it does not answer. */
	private static int connectionsSeenBy(RedisNode node) {
		if (!node.isRunning() || node.isPaused()) {
			return -1;
		}
		try {
			return (int) node.command("CLIENT", "LIST")
				.lines()
				.filter((line) -> line.contains("name=" + CLIENT_NAME))
				.count();
		}
		catch (RuntimeException ex) {
			return -1;
		}
	}

	private int verdict(List<Sample> samples) throws InterruptedException {
		boolean failed = false;
		// what failed attempts left expires with its TTL; the live nodes clean up the
		// rest
		LockSupport.parkNanos(TTL.plusSeconds(1).toNanos());
		long left = 0;
		for (RedisNode node : this.nodes.nodes()) {
			left += node.command("KEYS", "redlock:*").lines().filter((line) -> !line.isBlank()).count();
		}
		System.out.printf("end: %d lock keys left on the nodes after the longest TTL; %d calls over their bound; "
				+ "%d fencing token inversions%n", left, this.overruns.size(), this.tokenInversions.get());
		this.overruns.stream().limit(10).forEach((overrun) -> System.out.println("  overrun: " + overrun));
		if (left > 0 || !this.overruns.isEmpty() || this.tokenInversions.get() > 0) {
			failed = true;
		}
		if (samples.size() >= 3) {
			int third = Math.max(1, samples.size() / 3);
			List<Sample> middle = samples.subList(third, samples.size() - third);
			List<Sample> last = samples.subList(samples.size() - third, samples.size());
			failed |= trend("heap after GC (MB)", middle, last, (s) -> s.heap / 1_048_576.0, 32);
			failed |= trend("live threads", middle, last, (s) -> s.threads, 12);
			failed |= trend("client connections", middle, last, (s) -> s.clientConnections, 40);
			failed |= trend("queued clean-ups", middle, last, (s) -> s.cleanups, 200);
			failed |= trend("scheduled tasks", middle, last, (s) -> s.tasks, 40);
		}
		System.out.println(failed ? "soak: FAILED" : "soak: passed");
		return failed ? 1 : 0;
	}

	/**
	 * Whether the last third's highest figure stands above the middle third's beyond
	 * noise.
	 */
	private static boolean trend(String what, List<Sample> middle, List<Sample> last,
			java.util.function.ToDoubleFunction<Sample> figure, double noise) {
		double middleMax = middle.stream().mapToDouble(figure).max().orElse(0);
		double lastMax = last.stream().mapToDouble(figure).max().orElse(0);
		boolean rising = lastMax > middleMax * 1.5 + noise;
		System.out.printf("trend %-20s middle max %.1f, last max %.1f%s%n", what, middleMax, lastMax,
				rising ? "  <- grows" : "");
		return rising;
	}

	private record Sample(long second, long heap, int threads, List<Integer> serverSide, int clientConnections,
			int cleanups, int tasks, int waiting, double opsPerSecond, Map<String, Long> failures) {

		@Override
		public String toString() {
			return String.format(
					"%s t=%4ds heap %5.1f MB, threads %3d, connections per node %s (clients' own %d), "
							+ "clean-ups %d, tasks %d, waiting %d, %.0f ops/s, failures %s",
					LocalTime.now().truncatedTo(ChronoUnit.SECONDS), this.second, this.heap / 1_048_576.0, this.threads,
					this.serverSide, this.clientConnections, this.cleanups, this.tasks, this.waiting, this.opsPerSecond,
					this.failures);
		}

	}

}
