package dev.redlock.interceptor;

import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
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
import dev.redlock.test.RedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * A scheduled job on two instances of an application (two contexts on the same three
 * nodes), firing at the same instants: every tick runs on exactly one of them.
 * {@code minHold} keeps the lock past the job's fast run, so the instance that fires a
 * few milliseconds later finds it still taken and skips.
 */
class ScheduledJobTests {

	/** Ticks on which both instances fired, to wait for. */
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
			if (!ticks.contested.await(20, TimeUnit.SECONDS)) {
				fail("fewer than " + CONTESTED_TICKS + " ticks fired on both instances within 20 s: " + ticks);
			}
		}
		return ticks;
	}

	private static void assertEachContestedTickRanOnce(Ticks ticks) {
		// a tick that is still running or being refused when the contexts close may be
		// incomplete: look at the others
		ticks.attempts.forEach((second, attempts) -> {
			if (attempts.get() == 2) {
				assertThat(ticks.runs.get(second)).as("runs in second %d", second).hasValue(1);
			}
		});
		ticks.runs.values().forEach((runs) -> assertThat(runs).hasValueLessThanOrEqualTo(1));
	}

	private static ConfigurableApplicationContext start(Class<?> application, RedisNodes nodes, Ticks ticks) {
		return new SpringApplicationBuilder(application).web(WebApplicationType.NONE)
			.initializers((context) -> context.getBeanFactory().registerSingleton("ticks", ticks))
			.run("--redlock.nodes=" + String.join(",", nodes.uris()), "--redlock.restart-quarantine=0s",
					"--spring.main.banner-mode=off");
	}

	/** Per second: how many instances tried to lock the job, and how many ran it. */
	static final class Ticks implements RedlockListener {

		final Map<Long, AtomicInteger> attempts = new ConcurrentSkipListMap<>();

		final Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();

		/** Counted down on each tick that both instances tried. */
		final CountDownLatch contested = new CountDownLatch(CONTESTED_TICKS);

		@Override
		public void acquireFinished(AcquireEvent event) {
			if (event.lockName().equals(Job.LOCK)
					&& this.attempts.computeIfAbsent(now(), (second) -> new AtomicInteger()).incrementAndGet() == 2) {
				this.contested.countDown();
			}
		}

		void ran() {
			this.runs.computeIfAbsent(now(), (second) -> new AtomicInteger()).incrementAndGet();
		}

		private static long now() {
			return Instant.now().getEpochSecond();
		}

		@Override
		public String toString() {
			return "attempts " + this.attempts + ", runs " + new ConcurrentSkipListMap<>(this.runs);
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

		@Scheduled(cron = "* * * * * *")
		@SchedulerLock(name = Job.LOCK, lockAtLeastFor = "500ms")
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
		 * Fast: done in well under a millisecond, long before the other instance's
		 * scheduler fires.
		 */
		@Scheduled(cron = "* * * * * *")
		@DistributedLock(name = LOCK, ttl = "5s", minHold = "500ms", waitTime = "0s", onLocked = OnLocked.SKIP)
		public void run() {
			this.ticks.ran();
		}

	}

}
