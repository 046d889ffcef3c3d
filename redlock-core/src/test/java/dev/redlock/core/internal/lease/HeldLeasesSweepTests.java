package dev.redlock.core.internal.lease;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Delayed;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When {@link HeldLeases} sweeps: while leases keep coming a sweep stays scheduled, even
 * when it finds none held, so recording a lease never has to schedule one; once a sweep
 * comes after no new lease, sweeping stops. Pure logic: the leases are strings with
 * remaining validities set by the test, and the test runs each scheduled sweep itself,
 * when it chooses, so no timing is involved.
 */
class HeldLeasesSweepTests {

	private static final long VALIDITY_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

	private final Map<String, Long> remaining = new ConcurrentHashMap<>();

	private final ManualScheduler scheduler = new ManualScheduler();

	private final HeldLeases<String> held = new HeldLeases<>(this.scheduler,
			(lease) -> this.remaining.getOrDefault(lease, 0L));

	@Test
	void aSweepStaysScheduledWhileLeasesComeAndStopsAfterOneWithout() {
		lockAndUnlock("first");
		assertThat(this.scheduler.scheduled).isEqualTo(1);

		long beforeSweep = System.nanoTime();
		this.scheduler.runSweep();
		Long next = this.held.nextSweepNanos();
		assertThat(next).as("a sweep is still scheduled after one that found no lease").isNotNull();
		assertThat(next - beforeSweep).as("a validity after the sweep").isGreaterThanOrEqualTo(VALIDITY_NANOS);
		assertThat(this.scheduler.scheduled).isEqualTo(2);

		lockAndUnlock("second");
		assertThat(this.scheduler.scheduled).as("a lease that finds a sweep due by its end schedules none")
			.isEqualTo(2);

		this.scheduler.runSweep();
		assertThat(this.scheduler.scheduled).as("a sweep after the second lease").isEqualTo(3);
		this.scheduler.runSweep();
		assertThat(this.held.nextSweepNanos()).as("no sweep after one that came after no lease").isNull();
		assertThat(this.scheduler.scheduled).isEqualTo(3);

		lockAndUnlock("after a pause");
		assertThat(this.scheduler.scheduled).as("the next lease schedules a sweep again").isEqualTo(4);
	}

	@Test
	void aSweepDueShortlyAfterALeasesEndServesIt() {
		long tenSeconds = TimeUnit.SECONDS.toNanos(10);
		lockAndUnlock("long", tenSeconds);
		assertThat(this.scheduler.scheduled).isEqualTo(1);
		// ends up to 5 ms before the sweep (validities of leases taken in a row differ)
		lockAndUnlock("a little shorter", tenSeconds - TimeUnit.MILLISECONDS.toNanos(5));
		assertThat(this.scheduler.scheduled).isEqualTo(1);
		lockAndUnlock("much shorter", TimeUnit.MILLISECONDS.toNanos(100));
		assertThat(this.scheduler.scheduled).as("a sweep long after a lease's end is brought forward").isEqualTo(2);
		assertThat(this.scheduler.cancelled).isEqualTo(1);
	}

	@Test
	void aLeaseNeverForgottenIsDroppedOnceItsValidityIsOver() {
		this.remaining.put("forgotten", VALIDITY_NANOS);
		this.held.add("forgotten", VALIDITY_NANOS);
		this.scheduler.runSweep();
		assertThat(this.held.size()).isEqualTo(1);
		assertThat(this.held.nextSweepNanos()).isNotNull();

		this.remaining.put("forgotten", 0L);
		this.scheduler.runSweep();
		assertThat(this.held.size()).isZero();
		assertThat(this.held.nextSweepNanos()).as("nothing held, and no lease since the last sweep").isNull();
	}

	@Test
	void aLeaseRecordedWhileASweepRunsGetsASweep() {
		AtomicReference<HeldLeases<String>> self = new AtomicReference<>();
		boolean[] armed = new boolean[1];
		boolean[] recorded = new boolean[1];
		HeldLeases<String> held = new HeldLeases<>(this.scheduler, (lease) -> {
			if (lease.equals("over") && armed[0] && !recorded[0]) {
				// recorded while the sweep runs, after it read what came before it
				recorded[0] = true;
				self.get().add("late", VALIDITY_NANOS);
			}
			return this.remaining.getOrDefault(lease, 0L);
		});
		self.set(held);
		this.remaining.put("over", VALIDITY_NANOS);
		this.remaining.put("late", VALIDITY_NANOS);
		held.add("over", VALIDITY_NANOS);
		this.scheduler.runSweep();
		this.scheduler.runSweep();
		assertThat(held.size()).isEqualTo(1);

		// no lease since the last sweep, and the one held is over; one comes meanwhile
		this.remaining.put("over", 0L);
		armed[0] = true;
		this.scheduler.runSweep();
		assertThat(recorded[0]).isTrue();
		assertThat(held.valid()).containsExactly("late");
		assertThat(held.nextSweepNanos()).as("the lease recorded during the sweep has a sweep").isNotNull();
	}

	/** Records a lease and forgets it, as a release does. */
	private void lockAndUnlock(String lease) {
		lockAndUnlock(lease, VALIDITY_NANOS);
	}

	private void lockAndUnlock(String lease, long validityNanos) {
		this.held.add(lease, validityNanos);
		this.held.remove(lease);
	}

	/** Keeps the scheduled sweep for the test to run, and counts those cancelled. */
	private static final class ManualScheduler implements HeldLeases.Scheduler {

		private Runnable task;

		private Parked future;

		private int scheduled;

		private int cancelled;

		@Override
		public ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
			if (this.future != null && this.future.isCancelled()) {
				this.cancelled++;
			}
			this.task = task;
			this.scheduled++;
			this.future = new Parked();
			return this.future;
		}

		/** Runs the scheduled sweep, as though its time had come. */
		void runSweep() {
			assertThat(this.task).as("a sweep is scheduled").isNotNull();
			assertThat(this.future.isCancelled()).as("the scheduled sweep was not cancelled").isFalse();
			Runnable sweep = this.task;
			this.task = null;
			sweep.run();
		}

	}

	/** A scheduled run that never runs by itself. */
	private static final class Parked extends FutureTask<Void> implements ScheduledFuture<Void> {

		Parked() {
			super(() -> null);
		}

		@Override
		public long getDelay(TimeUnit unit) {
			return 0;
		}

		@Override
		public int compareTo(Delayed other) {
			return 0;
		}

	}

}
