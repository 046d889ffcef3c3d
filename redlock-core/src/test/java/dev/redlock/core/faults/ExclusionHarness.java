package dev.redlock.core.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.LockNotAcquiredException.Reason;
import dev.redlock.core.LockRequest;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockListener;
import dev.redlock.core.RedlockSettings;
import dev.redlock.core.ReleaseOutcome;
import dev.redlock.core.WarmPools;

/**
 * Contention on one lock under injected faults, watched by three mutual-exclusion
 * oracles.
 *
 * <p>
 * Worker threads, spread over several {@link Redlock} instances (each with its own
 * connection pools, as separate processes would have), repeatedly acquire one resource
 * with single attempts, run a critical section and release. The run goes through
 * {@link Phase phases}: each starts by injecting its fault and lasts until its condition
 * holds or its time is up. The oracles:
 * <ol>
 * <li><b>occupancy</b>: the holders inside the critical section: one that enters while
 * another holder with a valid lease is inside is a violation (one whose lease is no
 * longer valid is an overstay, see below);</li>
 * <li><b>register</b>: a read–think–write of a shared value, which must end equal to the
 * number of critical sections run (a lost update means two holders overlapped);</li>
 * <li><b>intervals</b>: each lease's
 * {@code [acquired, min(release started, validity end)]}, from {@link System#nanoTime()}
 * at the return of the acquisition, must overlap no other lease's.</li>
 * </ol>
 * A lease returned with no validity left counts as a violation too. Validity is the
 * lease's as renewed: automatic renewal moves its end. A critical section that outlives
 * its validity (a client pause) is the known failure mode of Redlock, not a violation: it
 * is counted as an overstay, and neither writes the register nor counts towards occupancy
 * or intervals beyond its validity.
 *
 * <p>
 * Hooks for scenarios that change how a lock is taken or held: an {@link Acquirer} (e.g.
 * with automatic renewal) and a {@link CriticalSection} (e.g. one that outlives its
 * lease, or restarts a node while holding it).
 */
final class ExclusionHarness {

	static final String RESOURCE = "faults";

	/** Worker threads, spread over {@link #INSTANCES} instances. */
	private static final int THREADS = 8;

	private static final int INSTANCES = 2;

	/** How long {@link CriticalSection#THINK} thinks. */
	private static final Duration WORK = Duration.ofNanos(200_000);

	/** How long the workers may take to finish their attempt once the run is over. */
	private static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(10);

	private final String scenario;

	private final List<String> uris;

	private final RedlockSettings settings;

	private final Duration ttl;

	private final List<Phase> phases = new ArrayList<>();

	private Acquirer acquirer = Acquirer.SINGLE_ATTEMPT;

	private CriticalSection section = CriticalSection.THINK;

	private ExclusionHarness(String scenario, List<String> uris, RedlockSettings settings, Duration ttl) {
		this.scenario = scenario;
		this.uris = List.copyOf(uris);
		this.settings = settings;
		this.ttl = ttl;
	}

	/**
	 * Starts a scenario on the given nodes: every lock is taken with these settings and
	 * this TTL.
	 */
	static ExclusionHarness scenario(String name, List<String> uris, RedlockSettings settings, Duration ttl) {
		return new ExclusionHarness(name, uris, settings, ttl);
	}

	/** Replaces the single plain attempt with which workers take the lock. */
	ExclusionHarness acquirer(Acquirer acquirer) {
		this.acquirer = acquirer;
		return this;
	}

	/** Replaces the critical section, by default {@link CriticalSection#THINK}. */
	ExclusionHarness section(CriticalSection section) {
		this.section = section;
		return this;
	}

	/** Adds a phase, run after those added before. */
	ExclusionHarness phase(String name, Fault fault, Until until, Duration maxDuration) {
		this.phases.add(new Phase(name, fault, until, maxDuration));
		return this;
	}

	/**
	 * Runs every phase, stops the workers, closes the instances and returns what was
	 * seen. Prints the scenario's figure line.
	 */
	Report run() throws Exception {
		if (this.phases.isEmpty()) {
			throw new IllegalStateException("a scenario needs at least 1 phase");
		}
		Run run = new Run(this.phases.size());
		List<Redlock> redlocks = new ArrayList<>();
		ExecutorService executor = Executors.newFixedThreadPool(THREADS);
		long started = System.nanoTime();
		try {
			for (int i = 0; i < INSTANCES; i++) {
				redlocks.add(Redlock.builder().nodes(this.uris).settings(this.settings).listener(run).build());
			}
			// a new instance's first call waits for its first connections (up to the
			// warm-up's bound), and a connection still being opened when a fault strikes
			// may fail and leave its node alone for a few node timeouts: every connection
			// opened in advance is open before the first phase, so that no measured
			// attempt includes either
			redlocks.forEach(WarmPools::await);
			CountDownLatch go = new CountDownLatch(1);
			List<Future<?>> workers = new ArrayList<>();
			for (int t = 0; t < THREADS; t++) {
				Redlock redlock = redlocks.get(t % INSTANCES);
				workers.add(executor.submit(() -> {
					go.await();
					work(redlock, run);
					return null;
				}));
			}
			for (int p = 0; p < this.phases.size(); p++) {
				Phase phase = this.phases.get(p);
				// attempts that overlap the injection belong to no phase
				run.phase.set(Run.INJECTING);
				phase.fault().inject();
				run.phase.set(p);
				go.countDown();
				PhaseStats stats = run.stats[p];
				awaitOrTimeUp(phase.maxDuration(), () -> phase.until().reached(stats));
			}
			run.stop.set(true);
			for (Future<?> worker : workers) {
				worker.get(DRAIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
			}
		}
		finally {
			run.stop.set(true);
			executor.shutdownNow();
			redlocks.forEach(Redlock::close);
		}
		Report report = new Report(this.scenario, List.copyOf(this.phases), run,
				Duration.ofNanos(System.nanoTime() - started));
		System.out.println(report.line());
		return report;
	}

	private void work(Redlock redlock, Run run) {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		long backoff = this.settings.retryDelay().toNanos();
		while (!run.stop.get()) {
			int startPhase = run.phase.get();
			long attemptStart = System.nanoTime();
			Lease lease;
			try {
				lease = this.acquirer.acquire(redlock, RESOURCE, this.ttl);
			}
			catch (LockNotAcquiredException ex) {
				PhaseStats stats = run.statsFor(startPhase);
				stats.attempted(System.nanoTime() - attemptStart);
				stats.failures.get(ex.reason()).increment();
				// single attempts: back off as Redlock's own retry would, so split votes
				// resolve
				LockSupport.parkNanos(backoff / 2 + random.nextLong(backoff + 1));
				continue;
			}
			long acquiredAt = System.nanoTime();
			Duration remaining = lease.remainingValidity();
			PhaseStats stats = run.statsFor(startPhase);
			stats.attempted(acquiredAt - attemptStart);
			stats.acquisitions.increment();
			if (remaining.isZero() || remaining.isNegative()) {
				run.noValidity.incrementAndGet();
			}
			long validityEnd = acquiredAt + remaining.toNanos();
			// occupancy: every other holder inside now is a violation, unless its lease
			// is no longer valid: a
			// holder that outlived its lease (a client pause) is the known failure mode,
			// counted as an overstay
			Holder me = new Holder(lease);
			run.holders.add(me);
			for (Holder other : run.holders) {
				if (other != me) {
					if (other.lease().isValid()) {
						run.occupancyViolations.incrementAndGet();
					}
					else {
						run.overstayOverlaps.incrementAndGet();
					}
				}
			}
			run.maxOccupancy.accumulateAndGet(run.holders.size(), Math::max);
			long value = run.register.get();
			this.section.run(lease, WORK);
			// The validity as renewed: a lease still valid now was valid all along, since
			// an extension counts only
			// if it was confirmed before the current validity ran out (an expired lock is
			// never re-created). So the
			// interval ends no earlier than now + what is left; without renewal this is
			// the validity at acquisition.
			long sectionEnd = System.nanoTime();
			Duration left = lease.remainingValidity();
			if (!left.isZero()) {
				validityEnd = Math.max(validityEnd, sectionEnd + left.toNanos());
			}
			boolean overstayed = sectionEnd - validityEnd > 0;
			if (overstayed) {
				// it may no longer write: the register counts the sections of holders
				// within their validity
				run.overstays.incrementAndGet();
			}
			else {
				run.register.set(value + 1);
				run.sections.incrementAndGet();
			}
			run.holders.remove(me);
			long releaseStart = System.nanoTime();
			ReleaseOutcome outcome = lease.release();
			run.releases.computeIfAbsent(outcome, (key) -> new LongAdder()).increment();
			run.intervals.add(new Interval(acquiredAt, Math.min(releaseStart, validityEnd)));
		}
	}

	/** Polls until the condition holds or the time is up; either way the run goes on. */
	private static void awaitOrTimeUp(Duration limit, BooleanSupplier condition) {
		long deadline = System.nanoTime() + limit.toNanos();
		while (!condition.getAsBoolean() && System.nanoTime() - deadline < 0) {
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
		}
	}

	/** Polls until the condition holds, failing after the timeout. */
	static void awaitTrue(String what, Duration timeout, BooleanSupplier condition) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() - deadline > 0) {
				throw new AssertionError("Timed out after " + timeout.toMillis() + " ms waiting until " + what);
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
		}
	}

	/**
	 * How a worker takes the lock; one attempt, throwing {@link LockNotAcquiredException}
	 * when it fails.
	 */
	@FunctionalInterface
	interface Acquirer {

		/** A single attempt, so that every attempt is measured and bounded on its own. */
		Acquirer SINGLE_ATTEMPT = (redlock, resource, ttl) -> redlock
			.acquire(LockRequest.of(resource, ttl).named("faults"), Duration.ZERO);

		Lease acquire(Redlock redlock, String resource, Duration ttl);

	}

	/**
	 * Pauses the caller for the whole duration: {@code parkNanos} alone may return at
	 * once (a permit left by an earlier unpark of this thread) or early.
	 */
	static void pauseFor(Duration pause) {
		long end = System.nanoTime() + pause.toNanos();
		for (long left = pause.toNanos(); left > 0; left = end - System.nanoTime()) {
			LockSupport.parkNanos(left);
		}
	}

	/** What a holder does between the read and the write of the register. */
	@FunctionalInterface
	interface CriticalSection {

		/** Simulated work of the given length. */
		CriticalSection THINK = (lease, work) -> pauseFor(work);

		void run(Lease lease, Duration work);

	}

	/** A fault, injected when its phase starts. */
	@FunctionalInterface
	interface Fault {

		Fault NONE = () -> {
		};

		void inject() throws Exception;

	}

	/** When a phase has seen enough. */
	@FunctionalInterface
	interface Until {

		boolean reached(PhaseStats stats);

		static Until acquisitions(long count) {
			return (stats) -> stats.acquisitions.sum() >= count;
		}

		static Until failures(long count) {
			return (stats) -> stats.failureCount() >= count;
		}

	}

	/**
	 * One stage of a run.
	 *
	 * @param name shown in the report
	 * @param fault injected as the phase starts
	 * @param until when the phase has seen enough
	 * @param maxDuration when it ends anyway
	 */
	record Phase(String name, Fault fault, Until until, Duration maxDuration) {
	}

	/** A holder inside its critical section, compared by identity. */
	private static final class Holder {

		private final Lease lease;

		Holder(Lease lease) {
			this.lease = lease;
		}

		Lease lease() {
			return this.lease;
		}

	}

	/**
	 * A lease's span: {@code [acquired, min(release started, validity end)]}, in
	 * nanoTime.
	 */
	record Interval(long start, long end) {
	}

	/**
	 * Counts of one phase: attempts that started and ended in it, after its fault was
	 * injected.
	 */
	static final class PhaseStats {

		final LongAdder acquisitions = new LongAdder();

		final Map<Reason, LongAdder> failures = new EnumMap<>(Reason.class);

		final AtomicLong maxAttemptNanos = new AtomicLong();

		final LongAdder attempts = new LongAdder();

		PhaseStats() {
			for (Reason reason : Reason.values()) {
				this.failures.put(reason, new LongAdder());
			}
		}

		void attempted(long nanos) {
			this.attempts.increment();
			this.maxAttemptNanos.accumulateAndGet(nanos, Math::max);
		}

		long failureCount() {
			return this.failures.values().stream().mapToLong(LongAdder::sum).sum();
		}

		long failures(Reason reason) {
			return this.failures.get(reason).sum();
		}

		long acquisitions() {
			return this.acquisitions.sum();
		}

		/**
		 * Longest attempt seen from the outside: the call, including the clean-up after a
		 * failed round.
		 */
		Duration maxAttempt() {
			return Duration.ofNanos(this.maxAttemptNanos.get());
		}

	}

	/** Shared state of one run; also the listener of every instance. */
	private static final class Run implements RedlockListener {

		static final int INJECTING = -1;

		final PhaseStats[] stats;

		final AtomicInteger phase = new AtomicInteger();

		final AtomicBoolean stop = new AtomicBoolean();

		/** Holders inside their critical section now. */
		final Set<Holder> holders = ConcurrentHashMap.newKeySet();

		/**
		 * Entries into the critical section while a holder whose lease was no longer
		 * valid was still inside.
		 */
		final AtomicInteger overstayOverlaps = new AtomicInteger();

		final AtomicInteger maxOccupancy = new AtomicInteger();

		final AtomicInteger occupancyViolations = new AtomicInteger();

		final AtomicLong register = new AtomicLong();

		final AtomicLong sections = new AtomicLong();

		final AtomicInteger noValidity = new AtomicInteger();

		final AtomicInteger overstays = new AtomicInteger();

		final Map<ReleaseOutcome, LongAdder> releases = new ConcurrentHashMap<>();

		final Collection<Interval> intervals = new ConcurrentLinkedQueue<>();

		final Collection<Long> attemptNanos = new ConcurrentLinkedQueue<>();

		/**
		 * Attempts that started in one phase and ended in another, or overlapped an
		 * injection.
		 */
		final PhaseStats straddling = new PhaseStats();

		/** The phase an attempt belongs to: where it started, if it also ended there. */
		PhaseStats statsFor(int startPhase) {
			return (startPhase != INJECTING && this.phase.get() == startPhase) ? this.stats[startPhase]
					: this.straddling;
		}

		Run(int phases) {
			this.stats = new PhaseStats[phases];
			for (int i = 0; i < phases; i++) {
				this.stats[i] = new PhaseStats();
			}
		}

		@Override
		public void acquireFinished(AcquireEvent event) {
			// with single attempts, one event per attempt: the round, and the clean-up
			// after a failed one
			this.attemptNanos.add(event.duration().toNanos());
		}

	}

	/** What a run saw. */
	static final class Report {

		private final String scenario;

		private final List<Phase> phases;

		private final Run run;

		private final Duration wallTime;

		private final long overlaps;

		private Report(String scenario, List<Phase> phases, Run run, Duration wallTime) {
			this.scenario = scenario;
			this.phases = phases;
			this.run = run;
			this.wallTime = wallTime;
			this.overlaps = overlaps(run.intervals);
		}

		/** Intervals that start before an earlier-starting one has ended. */
		static long overlaps(Collection<Interval> intervals) {
			List<Interval> sorted = new ArrayList<>(intervals);
			sorted.sort(Comparator.comparingLong(Interval::start));
			long overlapping = 0;
			long maxEnd = Long.MIN_VALUE;
			boolean first = true;
			for (Interval interval : sorted) {
				if (!first && interval.start() - maxEnd < 0) {
					overlapping++;
				}
				maxEnd = first ? interval.end() : Math.max(maxEnd, interval.end());
				first = false;
			}
			return overlapping;
		}

		/** Critical sections run, overstays included. */
		long acquisitions() {
			return this.run.sections.get() + this.run.overstays.get();
		}

		long occupancyViolations() {
			return this.run.occupancyViolations.get();
		}

		long registerLostUpdates() {
			return this.run.sections.get() - this.run.register.get();
		}

		long overlaps() {
			return this.overlaps;
		}

		/** Every lease's interval, in no particular order. */
		List<Interval> intervals() {
			return List.copyOf(this.run.intervals);
		}

		/**
		 * Holders that entered while an overstaying holder (lease no longer valid) was
		 * still inside.
		 */
		long overstayOverlaps() {
			return this.run.overstayOverlaps.get();
		}

		long leasesWithoutValidity() {
			return this.run.noValidity.get();
		}

		/**
		 * Critical sections that outlived their lease (validity as renewed): the known
		 * failure mode of a client pause. They are left out of the register and their
		 * interval ends with their validity; other scenarios assert there are none.
		 */
		long overstays() {
			return this.run.overstays.get();
		}

		long violations() {
			return occupancyViolations() + Math.abs(registerLostUpdates()) + overlaps() + leasesWithoutValidity();
		}

		long releases(ReleaseOutcome outcome) {
			LongAdder count = this.run.releases.get(outcome);
			return (count != null) ? count.sum() : 0;
		}

		PhaseStats phase(String name) {
			for (int i = 0; i < this.phases.size(); i++) {
				if (this.phases.get(i).name().equals(name)) {
					return this.run.stats[i];
				}
			}
			throw new IllegalArgumentException("no phase " + name);
		}

		/** The 99th percentile of attempt durations reported by the listener. */
		Duration p99Attempt() {
			List<Long> sorted = new ArrayList<>(this.run.attemptNanos);
			if (sorted.isEmpty()) {
				return Duration.ZERO;
			}
			sorted.sort(null);
			int index = (int) Math.ceil(sorted.size() * 0.99) - 1;
			return Duration.ofNanos(sorted.get(Math.max(0, index)));
		}

		/** Attempts that straddled a phase change, fault injection included. */
		PhaseStats straddling() {
			return this.run.straddling;
		}

		/** Longest attempt of the whole run, from the outside. */
		Duration maxAttempt() {
			Duration max = this.run.straddling.maxAttempt();
			for (PhaseStats stats : this.run.stats) {
				max = (stats.maxAttempt().compareTo(max) > 0) ? stats.maxAttempt() : max;
			}
			return max;
		}

		Map<Reason, Long> failuresByReason() {
			Map<Reason, Long> total = new EnumMap<>(Reason.class);
			List<PhaseStats> all = new ArrayList<>(List.of(this.run.stats));
			all.add(this.run.straddling);
			for (PhaseStats stats : all) {
				for (Reason reason : Reason.values()) {
					long count = stats.failures(reason);
					if (count > 0) {
						total.merge(reason, count, Long::sum);
					}
				}
			}
			return total;
		}

		String line() {
			List<String> phaseParts = new ArrayList<>();
			for (int i = 0; i < this.phases.size(); i++) {
				PhaseStats stats = this.run.stats[i];
				phaseParts.add(this.phases.get(i).name() + ": " + stats.acquisitions() + " acq/" + stats.failureCount()
						+ " fail, max " + stats.maxAttempt().toMillis() + " ms");
			}
			PhaseStats straddling = this.run.straddling;
			phaseParts.add("straddling: " + straddling.acquisitions() + " acq/" + straddling.failureCount() + " fail");
			String perPhase = String.join("; ", phaseParts);
			String failures = failuresByReason().entrySet()
				.stream()
				.map((entry) -> entry.getKey() + "=" + entry.getValue())
				.collect(Collectors.joining(",", "{", "}"));
			return String.format("scenario %s: acquisitions=%d violations=%d p99Attempt=%.1f ms failures(by reason)=%s"
					+ " [occupancy=%d register=%d overlaps=%d noValidity=%d overstays=%d (entered past one: %d); phases %s; %d ms]",
					this.scenario, acquisitions(), violations(), this.p99Attempt().toNanos() / 1e6, failures,
					occupancyViolations(), registerLostUpdates(), overlaps(), leasesWithoutValidity(), overstays(),
					overstayOverlaps(), perPhase, this.wallTime.toMillis());
		}

	}

}
