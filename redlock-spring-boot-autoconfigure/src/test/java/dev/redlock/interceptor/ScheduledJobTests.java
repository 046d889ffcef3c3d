package dev.redlock.interceptor;

import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import dev.redlock.annotation.DistributedLock;
import dev.redlock.annotation.OnLocked;
import dev.redlock.shedlock.RedlockLockProvider;
import dev.redlock.core.RedlockListener;
import dev.redlock.core.RedlockListener.AcquireOutcome;
import dev.redlock.test.RedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * A scheduled job on two instances of an application (two contexts on the same three
 * nodes), firing at the same instants: every tick runs on exactly one of them.
 * {@code minHold} keeps the lock past the job's fast run, so the instance that fires a
 * little later finds it still taken and skips.
 */
class ScheduledJobTests {

	/**
	 * Ticks on which both instances fired, to wait for: the last one may still be running
	 * when the contexts close, the others are looked at.
	 */
	private static final int CONTESTED_TICKS = 4;

	@Test
	void eachTickRunsOnceAcrossTwoInstances() throws InterruptedException {
		Ticks ticks = runTwoInstances(JobApplication.class);
		System.out.println("scheduled job, per second: " + ticks);
		assertEachContestedTickRanOnce(ticks);
	}

	/**
	 * The same with ShedLock's {@code @SchedulerLock}, on the {@code LockProvider} the
	 * starter defines.
	 */
	@Test
	void shedLockJobsRunEachTickOnceOnTheRedlockLockProvider() throws InterruptedException {
		Ticks ticks = runTwoInstances(ShedLockJobApplication.class);
		System.out.println("ShedLock job on Redlock, per second: " + ticks);
		assertEachContestedTickRanOnce(ticks);
	}

	private static Ticks runTwoInstances(Class<?> application) throws InterruptedException {
		Ticks ticks = new Ticks();
		try (RedisNodes nodes = RedisNodes.start(3);
				ConfigurableApplicationContext first = start(application, nodes, ticks);
				ConfigurableApplicationContext second = start(application, nodes, ticks)) {
			if (application == ShedLockJobApplication.class) {
				assertThat(first.getBean(LockProvider.class)).isInstanceOf(RedlockLockProvider.class);
			}
			if (!ticks.contested.await(30, TimeUnit.SECONDS)) {
				fail("fewer than " + CONTESTED_TICKS + " ticks fired on both instances within 30 s: " + ticks);
			}
		}
		return ticks;
	}

	private static void assertEachContestedTickRanOnce(Ticks ticks) {
		// the last contested tick may still be running when the contexts close; every
		// earlier tick is complete (each instance runs its ticks one after the other)
		long last = ticks.lastContested;
		int decided = 0;
		for (Map.Entry<Long, Tick> entry : ticks.ticks.entrySet()) {
			Tick tick = entry.getValue();
			// never two runs of one tick, whatever else happened in it
			assertThat(tick.runs).as("runs in second %d: %s", entry.getKey(), ticks).hasValueLessThanOrEqualTo(1);
			// one instance got the lock and the other was refused: the one that got it
			// ran the job, once. A tick whose only lock went to nobody (an attempt that
			// failed for a reason other than contention) or that both lost (the lock of
			// the tick before still held) proves nothing more than the line above
			if (entry.getKey() < last && tick.acquired.get() == 1 && tick.contended.get() == 1) {
				decided++;
				assertThat(tick.runs).as("runs in second %d: %s", entry.getKey(), ticks).hasValue(1);
			}
		}
		assertThat(decided).as("ticks one instance won and the other lost: %s", ticks).isPositive();
	}

	private static ConfigurableApplicationContext start(Class<?> application, RedisNodes nodes, Ticks ticks) {
		return new SpringApplicationBuilder(application).web(WebApplicationType.NONE)
			.initializers((context) -> context.getBeanFactory().registerSingleton("ticks", ticks))
			.run("--redlock.nodes=" + String.join(",", nodes.uris()), "--redlock.restart-quarantine=0s",
					"--spring.main.banner-mode=off");
	}

	/**
	 * Per tick (the second a scheduler fired in): how many instances tried to lock the
	 * job, how they fared, and how many ran it.
	 */
	static final class Ticks implements RedlockListener {

		final Map<Long, Tick> ticks = new ConcurrentSkipListMap<>();

		/** Counted down on each tick that both instances tried. */
		final CountDownLatch contested = new CountDownLatch(CONTESTED_TICKS);

		/** The tick that counted {@link #contested} down to zero. */
		volatile long lastContested = Long.MAX_VALUE;

		/**
		 * The tick of this scheduler thread's last attempt: the run that follows it on
		 * the same thread belongs to it, even if it ends in the next second.
		 */
		private final ThreadLocal<Long> current = new ThreadLocal<>();

		@Override
		public void acquireFinished(AcquireEvent event) {
			if (!event.lockName().equals(Job.LOCK)) {
				return;
			}
			long second = tickOf(Instant.now().minus(event.duration()));
			this.current.set(second);
			Tick tick = this.ticks.computeIfAbsent(second, (key) -> new Tick());
			if (event.outcome() == AcquireOutcome.ACQUIRED) {
				tick.acquired.incrementAndGet();
			}
			else if (event.outcome() == AcquireOutcome.CONTENDED) {
				tick.contended.incrementAndGet();
			}
			if (tick.attempts.incrementAndGet() == 2) {
				synchronized (this.contested) {
					if (this.contested.getCount() == 1) {
						this.lastContested = second;
					}
					this.contested.countDown();
				}
			}
		}

		void ran() {
			Long second = this.current.get();
			this.ticks.computeIfAbsent((second != null) ? second : tickOf(Instant.now()), (key) -> new Tick()).runs
				.incrementAndGet();
		}

		/**
		 * The second a scheduler fired in, from when an attempt began: a cron trigger
		 * fires on the second, or a moment before it by the clocks' difference, and the
		 * attempt begins a little after it, later on a loaded machine.
		 */
		private static long tickOf(Instant began) {
			return began.plusMillis(200).getEpochSecond();
		}

		@Override
		public String toString() {
			return this.ticks.toString();
		}

	}

	/** One tick: attempts, by outcome, and runs. */
	static final class Tick {

		final AtomicInteger attempts = new AtomicInteger();

		final AtomicInteger acquired = new AtomicInteger();

		final AtomicInteger contended = new AtomicInteger();

		final AtomicInteger runs = new AtomicInteger();

		@Override
		public String toString() {
			return "attempts " + this.attempts + " (acquired " + this.acquired + ", contended " + this.contended
					+ "), runs " + this.runs;
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@EnableScheduling
	@Import(Job.class)
	static class JobApplication {

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@EnableScheduling
	@EnableSchedulerLock(defaultLockAtMostFor = "10s")
	@Import(ShedLockJob.class)
	static class ShedLockJobApplication {

	}

	static class ShedLockJob {

		private final Ticks ticks;

		ShedLockJob(Ticks ticks) {
			this.ticks = ticks;
		}

		/** Held for 900 ms: see {@link Job#run()}. */
		@Scheduled(cron = "* * * * * *")
		@SchedulerLock(name = Job.LOCK, lockAtLeastFor = "900ms")
		public void run() {
			this.ticks.ran();
		}

	}

	static class Job {

		static final String LOCK = "report-job";

		private final Ticks ticks;

		Job(Ticks ticks) {
			this.ticks = ticks;
		}

		/**
		 * Fast: done in well under a millisecond, usually before the other instance's
		 * scheduler fires. Held for 900 ms: on a loaded machine the other instance may
		 * fire hundreds of milliseconds later, and must still find the lock taken; the
		 * lock is free again for the next tick, a second later.
		 */
		@Scheduled(cron = "* * * * * *")
		@DistributedLock(name = LOCK, ttl = "5s", minHold = "900ms", waitTime = "0s", onLocked = OnLocked.SKIP)
		public void run() {
			this.ticks.ran();
		}

	}

}
