package dev.redlock.shedlock;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.redlock.NodeKeys;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockSettings;
import dev.redlock.test.RedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The ShedLock provider on three real nodes: one holder per job name,
 * {@code lockAtLeastFor}, extension, and a {@code lockAtMostFor} beyond the restart
 * quarantine.
 */
class RedlockLockProviderTests {

	private static final String KEY = "redlock:shedlock:report";

	private RedisNodes nodes;

	private final List<Redlock> redlocks = new ArrayList<>();

	@BeforeEach
	void start() {
		this.nodes = RedisNodes.start(3);
	}

	@AfterEach
	void stop() {
		this.redlocks.forEach(Redlock::close);
		this.nodes.close();
	}

	@Test
	void oneHolderPerJobNameAndLockAtLeastForKeepsTheLockAfterAFastRun() {
		RedlockLockProvider provider = provider(Duration.ZERO);
		// lockAtLeastFor 3 s: the checks below run within it even when a loaded machine
		// delays them by hundreds of milliseconds
		SimpleLock lock = provider.lock(job(Duration.ofSeconds(10), Duration.ofSeconds(3))).orElseThrow();
		assertThat(provider.lock(job(Duration.ofSeconds(10), Duration.ZERO))).isEmpty();
		lock.unlock();
		// released after a fast run, but kept until lockAtLeastFor
		assertThat(provider.lock(job(Duration.ofSeconds(10), Duration.ZERO))).isEmpty();
		assertThat(pttl()).isPositive().isLessThanOrEqualTo(3_000);
		Optional<SimpleLock> later = awaitLock(provider, job(Duration.ofSeconds(10), Duration.ZERO));
		later.orElseThrow().unlock();
		assertThat(pttl()).isEqualTo(-2);
	}

	@Test
	void extendingSetsTheNewLockAtMostFor() {
		RedlockLockProvider provider = provider(Duration.ZERO);
		SimpleLock lock = provider.lock(job(Duration.ofSeconds(2), Duration.ZERO)).orElseThrow();
		SimpleLock extended = lock.extend(Duration.ofSeconds(20), Duration.ZERO).orElseThrow();
		assertThat(pttl()).isGreaterThan(2_000);
		extended.unlock();
		assertThat(pttl()).isEqualTo(-2);
	}

	@Test
	void aLockAtMostForBeyondTheRestartQuarantineIsRenewedUpToIt() {
		Duration quarantine = Duration.ofSeconds(2);
		RedlockLockProvider provider = provider(quarantine);
		// the kit's nodes were started just now: wait until their own quarantine is over
		SimpleLock lock = awaitLock(provider, job(Duration.ofMinutes(5), Duration.ZERO)).orElseThrow();
		assertThat(pttl()).isPositive().isLessThanOrEqualTo(quarantine.toMillis());
		// held past its TTL by renewal
		long until = System.nanoTime() + quarantine.multipliedBy(2).toNanos();
		while (System.nanoTime() - until < 0) {
			assertThat(provider.lock(job(Duration.ofMinutes(5), Duration.ZERO))).isEmpty();
			// a poll every few milliseconds, not a busy loop that would starve the
			// renewal thread on a small machine
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
		}
		lock.unlock();
		assertThat(pttl()).isEqualTo(-2);
	}

	/**
	 * ShedLock's README example holds a job's lock 14 minutes ({@code lockAtMostFor} and
	 * {@code lockAtLeastFor}) against a 15-minute schedule, 14 times the 60 s restart
	 * quarantine; here 8 s against a 2 s quarantine. The job ends at once: another
	 * instance gets the lock only once the 8 s have passed, and soon after.
	 */
	@Test
	void aLockAtLeastForBeyondTheRestartQuarantineKeepsTheLockThatLongAfterAFastRun() {
		Duration quarantine = Duration.ofSeconds(2);
		Duration hold = Duration.ofSeconds(8);
		RedlockLockProvider instance = provider(quarantine);
		RedlockLockProvider other = provider(quarantine);
		// the kit's nodes were started just now: wait until their own quarantine is over
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		long acquiring;
		Optional<SimpleLock> lock;
		do {
			assertThat(System.nanoTime() - deadline).as("the job's lock was free within 10 s").isNegative();
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
			acquiring = System.nanoTime();
			lock = instance.lock(job(hold, hold));
		}
		while (lock.isEmpty());
		lock.get().unlock();
		assertThat(pttl()).isPositive().isLessThanOrEqualTo(quarantine.toMillis());

		Optional<SimpleLock> next;
		do {
			assertThat(Duration.ofNanos(System.nanoTime() - acquiring))
				.as("the other instance got the lock soon after the hold")
				.isLessThan(hold.plusSeconds(1));
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
			next = other.lock(job(hold, Duration.ZERO));
		}
		while (next.isEmpty());
		// a few milliseconds less: the nodes count whole milliseconds
		assertThat(Duration.ofNanos(System.nanoTime() - acquiring)).isGreaterThan(hold.minusMillis(10));
		next.get().unlock();
		assertThat(pttl()).isEqualTo(-2);
	}

	@Test
	void closingTheProviderReleasesTheLocksKeptForTheirLockAtLeastForWithTheTtlTheyLastGot() {
		Duration quarantine = Duration.ofSeconds(2);
		RedlockLockProvider instance = provider(quarantine);
		SimpleLock lock = awaitLock(instance, job(Duration.ofSeconds(30), Duration.ofSeconds(30))).orElseThrow();
		lock.unlock();
		assertThat(instance.longHoldsKept()).isOne();
		instance.close();
		assertThat(instance.longHoldsKept()).isZero();
		// left to expire with its last TTL; the lease is over, so nothing renews it
		assertThat(pttl()).isPositive().isLessThanOrEqualTo(quarantine.toMillis());
		assertThat(awaitLock(provider(quarantine), job(Duration.ofSeconds(30), Duration.ZERO))).isPresent();
	}

	/**
	 * A provider on a Redlock with a node timeout of 1 s, not the default 100 ms: each
	 * lock, extension and release must hear from a quorum within it, and on a loaded
	 * machine a healthy node can be descheduled for longer than 100 ms.
	 */
	private RedlockLockProvider provider(Duration quarantine) {
		Redlock redlock = Redlock.builder()
			.nodes(this.nodes.uris())
			.settings(RedlockSettings.defaults()
				.withDefaultTtl(Duration.ofSeconds(1))
				.withRestartQuarantine(quarantine)
				.withNodeTimeout(Duration.ofSeconds(1)))
			.build();
		this.redlocks.add(redlock);
		return new RedlockLockProvider(redlock);
	}

	private static LockConfiguration job(Duration atMost, Duration atLeast) {
		return new LockConfiguration(Instant.now(), "report", atMost, atLeast);
	}

	private long pttl() {
		return NodeKeys.quorumPttl(this.nodes, KEY);
	}

	private static Optional<SimpleLock> awaitLock(RedlockLockProvider provider, LockConfiguration job) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (true) {
			Optional<SimpleLock> lock = provider.lock(job);
			if (lock.isPresent()) {
				return lock;
			}
			if (System.nanoTime() - deadline > 0) {
				fail("the job's lock was not free within 10 s");
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
		}
	}

}
