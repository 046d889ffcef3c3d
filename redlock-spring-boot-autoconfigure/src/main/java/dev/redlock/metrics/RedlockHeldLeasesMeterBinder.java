package dev.redlock.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import dev.redlock.core.Redlock;

/**
 * Registers the meters read from the {@link Redlock} itself: the {@code redlock.held}
 * gauge, how many leases this instance holds now (acquired, not released, still within
 * their validity), the {@code redlock.waiters} gauge, how many of its threads wait for a
 * lock now, and the {@code redlock.listener.failures} counter, how many times a listener
 * threw (each failure is logged and changes nothing else). It is a binder rather than
 * part of {@link RedlockMetricsListener} because it reads the {@link Redlock}, which is
 * built with the listener.
 */
public final class RedlockHeldLeasesMeterBinder implements MeterBinder {

	private final Redlock redlock;

	/**
	 * Creates a binder for the leases of the given client.
	 * @param redlock the client whose leases are counted
	 */
	public RedlockHeldLeasesMeterBinder(Redlock redlock) {
		this.redlock = redlock;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		Gauge.builder("redlock.held", this.redlock, (redlock) -> redlock.heldLeases().size())
			.description("Leases this instance holds now")
			.strongReference(true)
			.register(registry);
		Gauge.builder("redlock.waiters", this.redlock, Redlock::waitingThreads)
			.description("Threads of this instance waiting for a lock now")
			.strongReference(true)
			.register(registry);
		FunctionCounter.builder("redlock.listener.failures", this.redlock, Redlock::listenerFailures)
			.description("Times a Redlock listener threw; the lock's work went on")
			.register(registry);
	}

}
