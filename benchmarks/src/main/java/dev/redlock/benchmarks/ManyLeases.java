package dev.redlock.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

import dev.redlock.core.Lease;
import dev.redlock.core.NodeStatus;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockListener;
import dev.redlock.core.RedlockSettings;
import dev.redlock.test.RedisNodes;

/**
 * Many auto-renewed leases held at once on one {@link Redlock} over five real nodes,
 * while a few threads lock and unlock other keys: the renewals due together go to the
 * nodes in batches. Three phases in one run: the threads alone, then with the held leases
 * (TTL 3 s, so a renewal per lease every second), then alone again. Prints, per phase,
 * the other threads' lock+unlock time (mean and p99) and the CPU time the renewal thread
 * used per second; then the leases lost and renewals that did not count.
 *
 * <p>
 * Exits with 1 when a lease was lost or a renewal did not count, else 0.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.redlock.benchmarks.ManyLeases [--leases 10000] [--seconds 300] [--alone-seconds 60] [--threads 4]
 * </pre>
 */
public final class ManyLeases {

	private static final Duration TTL = Duration.ofSeconds(3);

	/** The most lock+unlock times kept per thread and phase, for the percentiles. */
	private static final int MAX_SAMPLES = 2_000_000;

	private final LongAdder lost = new LongAdder();

	private final LongAdder failedRenewals = new LongAdder();

	private ManyLeases() {
	}

	public static void main(String[] args) throws Exception {
		int leases = 10_000;
		long seconds = 300;
		long aloneSeconds = 60;
		int threads = 4;
		for (int i = 0; i + 1 < args.length; i += 2) {
			switch (args[i]) {
				case "--leases" -> leases = Integer.parseInt(args[i + 1]);
				case "--seconds" -> seconds = Long.parseLong(args[i + 1]);
				case "--alone-seconds" -> aloneSeconds = Long.parseLong(args[i + 1]);
				case "--threads" -> threads = Integer.parseInt(args[i + 1]);
				default -> throw new IllegalArgumentException(
						"unknown option " + args[i] + "; use --leases N, --seconds N, --alone-seconds N, --threads N");
			}
		}
		RedlockSettings settings = RedlockSettings.builder()
			.restartQuarantine(TTL)
			.defaultTtl(TTL)
			.transport(Transports.chosen())
			.build();
		int status;
		try (RedisNodes nodes = RedisNodes.start(5)) {
			System.out.printf(
					"many leases: %d leases of %d s TTL, %d threads locking other keys, on %d nodes (%s), transport %s%n",
					leases, TTL.toSeconds(), threads, nodes.size(), nodes.backend(), settings.transport());
			ManyLeases run = new ManyLeases();
			try (Redlock redlock = Redlock.builder()
				.nodes(nodes.uris())
				.settings(settings)
				.listener(run.listener())
				.build()) {
				awaitCounting(redlock);
				status = run.run(redlock, leases, threads, Duration.ofSeconds(seconds),
						Duration.ofSeconds(aloneSeconds));
			}
		}
		System.exit(status);
	}

	private RedlockListener listener() {
		return new RedlockListener() {
			@Override
			public void leaseLost(LeaseLostEvent event) {
				ManyLeases.this.lost.increment();
			}

			@Override
			public void leaseExtended(ExtendEvent event) {
				if (event.outcome() != ExtendOutcome.EXTENDED) {
					ManyLeases.this.failedRenewals.increment();
				}
			}
		};
	}

	private static void awaitCounting(Redlock redlock) {
		long end = System.nanoTime() + TTL.multipliedBy(10).toNanos();
		while (!redlock.checkNodes().stream().allMatch(NodeStatus::counts)) {
			if (System.nanoTime() - end > 0) {
				throw new IllegalStateException("the nodes never counted: " + redlock.checkNodes());
			}
			LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
		}
	}

	private int run(Redlock redlock, int leaseCount, int threads, Duration length, Duration alone) {
		Phase before = phase(redlock, "alone", threads, alone);
		List<Lease> held = new ArrayList<>(leaseCount);
		long acquiring = System.nanoTime();
		for (int i = 0; i < leaseCount; i++) {
			held.add(redlock.acquire("held-" + i, TTL, Duration.ofSeconds(1)).autoRenew());
		}
		System.out.printf("acquired %d leases in %d ms%n", leaseCount, (System.nanoTime() - acquiring) / 1_000_000);
		Phase during = phase(redlock, "with " + leaseCount + " held leases", threads, length);
		long stillValid = held.stream().filter(Lease::isValid).count();
		held.forEach(Lease::release);
		Phase after = phase(redlock, "alone again", threads, alone);
		double aloneMean = (before.meanMicros() + after.meanMicros()) / 2;
		System.out.printf("lock+unlock with held leases / alone: mean %.2fx, p99 %.2fx%n",
				during.meanMicros() / aloneMean, during.p99Micros() / ((before.p99Micros() + after.p99Micros()) / 2));
		System.out.printf("leases still valid at the end: %d of %d; leases lost: %d; renewals that did not count: %d%n",
				stillValid, leaseCount, this.lost.sum(), this.failedRenewals.sum());
		return (this.lost.sum() == 0 && stillValid == leaseCount && this.failedRenewals.sum() == 0) ? 0 : 1;
	}

	/**
	 * Runs the lock+unlock threads for a while and reports what they and the renewal
	 * thread took.
	 */
	private static Phase phase(Redlock redlock, String name, int threads, Duration length) {
		AtomicBoolean running = new AtomicBoolean(true);
		LongAdder failures = new LongAdder();
		long[][] samples = new long[threads][];
		int[] counts = new int[threads];
		List<Thread> workers = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			int thread = t;
			samples[t] = new long[MAX_SAMPLES];
			workers.add(new Thread(() -> {
				long n = 0;
				while (running.get()) {
					long start = System.nanoTime();
					try {
						redlock.acquire("other-" + thread + "-" + (n++ % 64), TTL, Duration.ofSeconds(1)).release();
					}
					catch (RuntimeException ex) {
						failures.increment();
						continue;
					}
					if (counts[thread] < MAX_SAMPLES) {
						samples[thread][counts[thread]++] = System.nanoTime() - start;
					}
				}
			}, "many-leases-" + t));
		}
		long renewalCpuBefore = renewalCpuNanos();
		long processCpuBefore = processCpuNanos();
		long start = System.nanoTime();
		workers.forEach(Thread::start);
		// parkNanos alone may return at once (a permit left by an unpark of this thread,
		// which acquired the held leases) or early
		long end = start + length.toNanos();
		for (long left = length.toNanos(); left > 0; left = end - System.nanoTime()) {
			LockSupport.parkNanos(left);
		}
		running.set(false);
		for (Thread worker : workers) {
			try {
				worker.join();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("interrupted", ex);
			}
		}
		double seconds = (System.nanoTime() - start) / 1e9;
		// the renewal thread ends after 30 s with nothing to do, taking its CPU time
		// along
		double renewalCpu = Math.max(0, renewalCpuNanos() - renewalCpuBefore) / 1e9 / seconds;
		double processCpu = (processCpuNanos() - processCpuBefore) / 1e9 / seconds;
		long[] all = merge(samples, counts);
		Phase phase = new Phase(all);
		System.out.printf(
				"%s: %d lock+unlock (%d failed) in %.0f s, mean %.0f us, p99 %.0f us; CPU: renewal thread %.1f %%, "
						+ "this process %.0f %%%n",
				name, all.length, failures.sum(), seconds, phase.meanMicros(), phase.p99Micros(), renewalCpu * 100,
				processCpu * 100);
		return phase;
	}

	private static long[] merge(long[][] samples, int[] counts) {
		int total = Arrays.stream(counts).sum();
		long[] all = new long[total];
		int at = 0;
		for (int t = 0; t < samples.length; t++) {
			System.arraycopy(samples[t], 0, all, at, counts[t]);
			at += counts[t];
		}
		Arrays.sort(all);
		return all;
	}

	/**
	 * CPU time used so far by the renewal threads (their names start with
	 * {@code redlock-renewal-}).
	 */
	private static long renewalCpuNanos() {
		ThreadMXBean threads = ManagementFactory.getThreadMXBean();
		long total = 0;
		for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
			if (info != null && info.getThreadName().startsWith("redlock-renewal-")) {
				total += Math.max(0, threads.getThreadCpuTime(info.getThreadId()));
			}
		}
		return total;
	}

	private static long processCpuNanos() {
		return (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os)
				? os.getProcessCpuTime() : 0;
	}

	/** The sorted lock+unlock times of one phase. */
	private record Phase(long[] sorted) {

		double meanMicros() {
			return (this.sorted.length == 0) ? 0 : Arrays.stream(this.sorted).average().orElse(0) / 1_000;
		}

		double p99Micros() {
			return (this.sorted.length == 0) ? 0 : this.sorted[(int) (this.sorted.length * 0.99)] / 1_000.0;
		}

	}

}
