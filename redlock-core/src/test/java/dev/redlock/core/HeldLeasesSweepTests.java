package dev.redlock.core;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When {@link HeldLeases} sweeps: while leases keep coming a sweep stays scheduled, even
 * when it finds none held, so recording a lease never has to schedule one; once a sweep
 * comes after no new lease, sweeping stops. Pure logic on the renewal thread: the leases
 * are strings with remaining validities set by the test.
 */
class HeldLeasesSweepTests {

	private static final long VALIDITY_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

	private static final Duration PATIENCE = Duration.ofSeconds(10);

	private final Map<String, Long> remaining = new ConcurrentHashMap<>();

	@Test
	void aSweepStaysScheduledWhileLeasesComeAndStopsAfterOneWithout() {
		try (RenewalScheduler scheduler = new RenewalScheduler()) {
			HeldLeases<String> held = new HeldLeases<>(scheduler, (lease) -> this.remaining.getOrDefault(lease, 0L));
			lockAndUnlock(held, "first");
			Long first = held.nextSweepNanos();
			assertThat(first).isNotNull();

			// the first sweep finds nothing held, but a lease came since it was scheduled
			Long second = awaitSweepAfter(held, first);
			assertThat(second).as("a sweep is still scheduled after one that found no lease").isNotNull();
			assertThat(second - first).isGreaterThanOrEqualTo(VALIDITY_NANOS);

			// a lease now finds that sweep due no earlier than its own end: nothing to
			// schedule
			lockAndUnlock(held, "second");
			assertThat(held.nextSweepNanos()).isEqualTo(second);

			Long third = awaitSweepAfter(held, second);
			assertThat(third).as("a sweep is still scheduled after the second lease").isNotNull();
			assertThat(awaitSweepAfter(held, third)).as("no sweep after one that came after no lease").isNull();

			lockAndUnlock(held, "after a pause");
			assertThat(held.nextSweepNanos()).as("the next lease schedules a sweep again").isNotNull();
		}
	}

	@Test
	void aLeaseNeverForgottenKeepsTheSweepsGoingUntilItEnds() {
		try (RenewalScheduler scheduler = new RenewalScheduler()) {
			HeldLeases<String> held = new HeldLeases<>(scheduler, (lease) -> this.remaining.getOrDefault(lease, 0L));
			this.remaining.put("forgotten", VALIDITY_NANOS);
			held.add("forgotten", VALIDITY_NANOS);
			Long first = held.nextSweepNanos();
			assertThat(first).isNotNull();
			Long second = awaitSweepAfter(held, first);
			assertThat(second).isNotNull();
			assertThat(held.size()).isEqualTo(1);

			this.remaining.put("forgotten", 0L);
			TestSupport.awaitTrue("the forgotten lease was dropped", PATIENCE, () -> held.size() == 0);
		}
	}

	/** Records a lease and forgets it, as a release does. */
	private void lockAndUnlock(HeldLeases<String> held, String lease) {
		held.add(lease, VALIDITY_NANOS);
		held.remove(lease);
	}

	/**
	 * Waits until the sweep due at {@code due} has run and decided.
	 * @return when the next sweep is due, or {@code null} when none is scheduled
	 */
	private static Long awaitSweepAfter(HeldLeases<String> held, long due) {
		Long[] next = new Long[1];
		TestSupport.awaitTrue("the sweep due " + due + " ran", PATIENCE, () -> {
			next[0] = held.nextSweepNanos();
			return next[0] == null || next[0] != due;
		});
		return next[0];
	}

}
