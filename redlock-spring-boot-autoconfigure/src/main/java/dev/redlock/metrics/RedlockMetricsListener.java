package dev.redlock.metrics;

import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Function;
import java.util.function.IntFunction;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import dev.redlock.core.RedlockListener;
import dev.redlock.core.ReleaseOutcome;

/**
 * Records what a {@link dev.redlock.core.Redlock} does as Micrometer meters. Names and
 * tags are a contract:
 *
 * <table>
 * <caption>Meters</caption>
 * <tr>
 * <th>name</th>
 * <th>type</th>
 * <th>tags</th>
 * <th>what it measures</th>
 * </tr>
 * <tr>
 * <td>{@code redlock.acquire}</td>
 * <td>Timer</td>
 * <td>{@code lock}, {@code outcome} = {@code acquired} | {@code contended} |
 * {@code no_quorum} | {@code error}</td>
 * <td>one sample per acquisition, retries included</td>
 * </tr>
 * <tr>
 * <td>{@code redlock.wait}</td>
 * <td>Timer</td>
 * <td>{@code lock}, {@code outcome} as for {@code redlock.acquire}</td>
 * <td>time spent waiting for the lock: until the attempt that won began (zero when the
 * first attempt won at once), or the whole call when it failed</td>
 * </tr>
 * <tr>
 * <td>{@code redlock.acquire.attempts}</td>
 * <td>DistributionSummary</td>
 * <td>{@code lock}</td>
 * <td>rounds needed per acquisition, whatever its outcome</td>
 * </tr>
 * <tr>
 * <td>{@code redlock.validity.remaining}</td>
 * <td>DistributionSummary, milliseconds</td>
 * <td>{@code lock}</td>
 * <td>validity left at the moment of a successful acquisition</td>
 * </tr>
 * <tr>
 * <td>{@code redlock.held.duration}</td>
 * <td>Timer</td>
 * <td>{@code lock}</td>
 * <td>how long leases were held, from acquisition to release</td>
 * </tr>
 * <tr>
 * <td>{@code redlock.release}</td>
 * <td>Counter</td>
 * <td>{@code lock}, {@code outcome} = {@code released} | {@code expired} |
 * {@code unknown}</td>
 * <td>releases and what the nodes said</td>
 * </tr>
 * <tr>
 * <td>{@code redlock.extend}</td>
 * <td>Counter</td>
 * <td>{@code lock}, {@code outcome} = {@code extended} | {@code failed} |
 * {@code expired}</td>
 * <td>extension attempts</td>
 * </tr>
 * <tr>
 * <td>{@code redlock.lease.lost}</td>
 * <td>Counter</td>
 * <td>{@code lock}</td>
 * <td>leases lost, once each: a renewal or extension failed, the validity ran out before
 * release, or the release found the lock expired; the work may have overlapped with
 * another holder's</td>
 * </tr>
 * <tr>
 * <td>{@code redlock.node.requests}</td>
 * <td>Timer</td>
 * <td>{@code node} = {@code host:port}, {@code command} = {@code acquire} | {@code fence}
 * | {@code release} | {@code extend} | {@code ping}, {@code outcome} = {@code ok} |
 * {@code rejected} | {@code timeout} | {@code error}</td>
 * <td>each node's part in each round</td>
 * </tr>
 * <tr>
 * <td>{@code redlock.node.quarantines}</td>
 * <td>Counter</td>
 * <td>{@code node} = {@code host:port}, {@code reason} = {@code restart} |
 * {@code clock_step} | {@code failover} | {@code data_loss} | {@code rollback} |
 * {@code eviction}</td>
 * <td>times a node was put in quarantine (or its quarantine extended for another reason)
 * because it may have forgotten locks it granted; health shows which nodes are in
 * quarantine now</td>
 * </tr>
 * <tr>
 * <td>{@code redlock.held}</td>
 * <td>Gauge</td>
 * <td>none</td>
 * <td>leases this instance holds now; registered by
 * {@link RedlockHeldLeasesMeterBinder}</td>
 * </tr>
 * <tr>
 * <td>{@code redlock.waiters}</td>
 * <td>Gauge</td>
 * <td>none</td>
 * <td>threads of this instance waiting for a lock now; registered by
 * {@link RedlockHeldLeasesMeterBinder}</td>
 * </tr>
 * </table>
 *
 * <p>
 * {@code lock} is the lock's <em>name</em> (bounded), never the evaluated key.
 * {@code node} never carries credentials. Percentile histograms and percentiles of the
 * timers come from the usual Boot properties, for example
 * {@code management.metrics.distribution.percentiles-histogram.redlock.acquire=true}. The
 * meters of a lock name are registered on its first event and then reused, so recording
 * allocates no meter ids.
 */
public final class RedlockMetricsListener implements RedlockListener {

	private static final NodeCommand[] COMMANDS = NodeCommand.values();

	private static final NodeOutcome[] NODE_OUTCOMES = NodeOutcome.values();

	private final MeterRegistry registry;

	private final Map<String, LockMeters> locks = new ConcurrentHashMap<>();

	private final Map<String, AtomicReferenceArray<Timer>> nodes = new ConcurrentHashMap<>();

	/**
	 * Creates a listener that records into the given registry.
	 * @param registry where the meters go
	 */
	public RedlockMetricsListener(MeterRegistry registry) {
		this.registry = registry;
	}

	@Override
	public void acquireFinished(AcquireEvent event) {
		LockMeters meters = lock(event.lockName());
		meters.acquire[event.outcome().ordinal()].record(event.duration());
		meters.wait[event.outcome().ordinal()].record(event.waited());
		meters.attempts.record(event.attempts());
		if (event.outcome() == AcquireOutcome.ACQUIRED) {
			meters.validity.record(event.validity().toNanos() / 1_000_000.0);
		}
	}

	@Override
	public void leaseReleased(ReleaseEvent event) {
		LockMeters meters = lock(event.lockName());
		meters.heldDuration.record(event.heldFor());
		meters.release[event.outcome().ordinal()].increment();
	}

	@Override
	public void leaseLost(LeaseLostEvent event) {
		lock(event.lockName()).leaseLost.increment();
	}

	@Override
	public void leaseExtended(ExtendEvent event) {
		lock(event.lockName()).extend[event.outcome().ordinal()].increment();
	}

	@Override
	public void nodeRequestFinished(NodeRequestEvent event) {
		AtomicReferenceArray<Timer> timers = this.nodes.computeIfAbsent(event.node(),
				(node) -> new AtomicReferenceArray<>(COMMANDS.length * NODE_OUTCOMES.length));
		int index = event.command().ordinal() * NODE_OUTCOMES.length + event.outcome().ordinal();
		Timer timer = timers.get(index);
		if (timer == null) {
			// a race registers the same meter twice, which the registry resolves to one
			timer = Timer.builder("redlock.node.requests")
				.description("Time for one node to answer its part of a round")
				.tag("node", event.node())
				.tag("command", event.command().tag())
				.tag("outcome", event.outcome().tag())
				.register(this.registry);
			timers.set(index, timer);
		}
		timer.record(event.duration());
	}

	@Override
	public void nodeQuarantined(NodeQuarantineEvent event) {
		Counter.builder("redlock.node.quarantines")
			.description("Times a node was put in quarantine because it may have forgotten locks it granted")
			.tag("node", event.node())
			.tag("reason", event.reason().tag())
			.register(this.registry)
			.increment();
	}

	private LockMeters lock(String name) {
		return this.locks.computeIfAbsent(name, (key) -> new LockMeters(this.registry, key));
	}

	@Override
	public String toString() {
		return "RedlockMetricsListener[" + this.registry.getClass().getSimpleName() + "]";
	}

	/** Every meter of one lock name, indexed by the ordinal of their outcome enum. */
	private static final class LockMeters {

		final Timer[] acquire;

		final Timer[] wait;

		final DistributionSummary attempts;

		final DistributionSummary validity;

		final Timer heldDuration;

		final Counter[] release;

		final Counter[] extend;

		final Counter leaseLost;

		LockMeters(MeterRegistry registry, String lock) {
			this.acquire = byOutcome(lock, AcquireOutcome.values(), AcquireOutcome::tag, Timer[]::new,
					Timer.builder("redlock.acquire")
						.description("Time to acquire a lock, retries included")
						.withRegistry(registry));
			this.wait = byOutcome(lock, AcquireOutcome.values(), AcquireOutcome::tag, Timer[]::new,
					Timer.builder("redlock.wait")
						.description("Time spent waiting for a lock held by others")
						.withRegistry(registry));
			this.attempts = DistributionSummary.builder("redlock.acquire.attempts")
				.description("Rounds needed per acquisition")
				.tag("lock", lock)
				.register(registry);
			this.validity = DistributionSummary.builder("redlock.validity.remaining")
				.description("Validity left at the moment a lock was acquired")
				.baseUnit("milliseconds")
				.tag("lock", lock)
				.register(registry);
			this.heldDuration = Timer.builder("redlock.held.duration")
				.description("How long leases were held")
				.tag("lock", lock)
				.register(registry);
			this.release = byOutcome(lock, ReleaseOutcome.values(),
					(outcome) -> outcome.name().toLowerCase(Locale.ROOT), Counter[]::new,
					Counter.builder("redlock.release")
						.description("Releases, by what the nodes said")
						.withRegistry(registry));
			this.extend = byOutcome(lock, ExtendOutcome.values(), ExtendOutcome::tag, Counter[]::new,
					Counter.builder("redlock.extend")
						.description("Extension attempts, by outcome")
						.withRegistry(registry));
			this.leaseLost = Counter.builder("redlock.lease.lost")
				.description("Leases lost before they were released: the work outran its lease")
				.tag("lock", lock)
				.register(registry);
		}

		/**
		 * One meter per outcome, tagged with the lock and the outcome, at the index of
		 * the outcome's ordinal.
		 */
		private static <E extends Enum<E>, M extends Meter> M[] byOutcome(String lock, E[] outcomes,
				Function<E, String> tag, IntFunction<M[]> newArray, Meter.MeterProvider<M> meters) {
			M[] byOrdinal = newArray.apply(outcomes.length);
			for (E outcome : outcomes) {
				byOrdinal[outcome.ordinal()] = meters.withTags("lock", lock, "outcome", tag.apply(outcome));
			}
			return byOrdinal;
		}

	}

}
