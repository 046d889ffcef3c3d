package dev.redlock.shedlock;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

import dev.redlock.NodeKeys;
import dev.redlock.TwoRedlocks;
import dev.redlock.TestRedlocks;
import dev.redlock.core.Lease;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockSettings;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.fail;

/**
 * ShedLock's provider contract, plain and extensible, as ShedLock's own integration tests
 * state it, on three real nodes and two instances (two {@code Redlock}s, as two
 * application instances would have): written here, since ShedLock does not publish its
 * test support.
 */
@WithRedisNodes(count = 3)
class RedlockLockProviderContractTests {

	private static final String JOB = "contract-job";

	/** How long to wait for the nodes to show what a call did. */
	private static final Duration PATIENCE = Duration.ofSeconds(10);

	private static final String KEY = "redlock:" + RedlockLockProvider.RESOURCE_PREFIX + JOB;

	private final RedisNodes nodes;

	@AutoClose
	private final TwoRedlocks redlocks;

	RedlockLockProviderContractTests(RedisNodes nodes) {
		this.nodes = nodes;
		this.redlocks = TwoRedlocks.on(nodes);
	}

	@Test
	void locksAndUnlocks() {
		SimpleLock lock = provider().lock(job(Duration.ofMinutes(5), Duration.ZERO)).orElseThrow();
		assertLocked();
		lock.unlock();
		assertUnlocked();
	}

	@Test
	void grantsNoSecondLockInAnyInstance() {
		SimpleLock lock = provider().lock(job(Duration.ofMinutes(5), Duration.ZERO)).orElseThrow();
		assertThat(provider().lock(job(Duration.ofMinutes(5), Duration.ZERO))).isEmpty();
		assertThat(otherInstance().lock(job(Duration.ofMinutes(5), Duration.ZERO))).isEmpty();
		lock.unlock();
	}

	@Test
	void locksTwoJobsIndependently() {
		SimpleLock one = provider().lock(job(Duration.ofMinutes(5), Duration.ZERO)).orElseThrow();
		SimpleLock other = otherInstance()
			.lock(new LockConfiguration(Instant.now(), "other-job", Duration.ofMinutes(5), Duration.ZERO))
			.orElseThrow();
		one.unlock();
		other.unlock();
		assertUnlocked();
	}

	@Test
	void locksAgainRightAfterAnUnlock() {
		for (int i = 0; i < 10; i++) {
			RedlockLockProvider provider = (i % 2 == 0) ? provider() : otherInstance();
			SimpleLock lock = provider.lock(job(Duration.ofMinutes(5), Duration.ZERO)).orElseThrow();
			assertThat(otherInstance().lock(job(Duration.ofMinutes(5), Duration.ZERO))).isEmpty();
			lock.unlock();
		}
	}

	@Test
	void aLockExpiresAfterLockAtMostFor() {
		// lockAtMostFor 50 ms: the lock lives the smallest TTL (53 ms), which a loaded
		// machine can use up in one round: the lock is then refused, so try again
		awaitLock(provider(), job(Duration.ofMillis(50), Duration.ZERO));
		NodeKeys.awaitTrue("the 50 ms lock expired", PATIENCE, this::unlocked);
		SimpleLock again = awaitLock(otherInstance(), job(Duration.ofMillis(50), Duration.ZERO));
		again.unlock();
	}

	@Test
	void aLockAtMostForOfTwoMillisecondsIsGrantedAndExpires() {
		Duration smallestTtl = RedlockLockProvider.smallestTtl(TestRedlocks.SETTINGS);
		// the lease lives the smallest TTL (53 ms), which a loaded machine can use up in
		// one round (the lock is then refused), or before the test looks at it (the lease
		// is then over, and not listed): take it until it is seen, and read its TTL from
		// the lease rather than from the nodes, which may have let it expire meanwhile
		RedlockLockProvider provider = provider();
		long deadline = System.nanoTime() + PATIENCE.toNanos();
		SimpleLock lock = awaitLock(provider, job(Duration.ofMillis(2), Duration.ZERO));
		List<Lease> held = this.redlocks.here().heldLeases();
		while (held.isEmpty() && System.nanoTime() - deadline < 0) {
			lock = awaitLock(provider, job(Duration.ofMillis(2), Duration.ZERO));
			held = this.redlocks.here().heldLeases();
		}
		assertThat(held).as("the lease, seen while valid").singleElement().satisfies((lease) -> {
			assertThat(lease.resource()).isEqualTo(RedlockLockProvider.RESOURCE_PREFIX + JOB);
			assertThat(lease.ttl()).isEqualTo(smallestTtl);
		});
		NodeKeys.awaitTrue("the lock expired", PATIENCE, this::unlocked);
		assertThat(lock.extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
		assertUnlocked();
	}

	@Test
	void lockAtLeastForKeepsTheLockAfterAnUnlock() {
		// 3 s: the checks below run within it even when a loaded machine delays them by
		// hundreds of milliseconds
		SimpleLock lock = provider().lock(job(Duration.ofSeconds(10), Duration.ofSeconds(3))).orElseThrow();
		lock.unlock();
		assertThat(otherInstance().lock(job(Duration.ofMinutes(5), Duration.ZERO))).isEmpty();
		assertThat(pttl()).isPositive().isLessThanOrEqualTo(3_000);
		NodeKeys.awaitTrue("the lock ran out after lockAtLeastFor", PATIENCE, this::unlocked);
		otherInstance().lock(job(Duration.ofMinutes(5), Duration.ZERO)).orElseThrow().unlock();
	}

	@Test
	void aHandleUnlocksOnce() {
		SimpleLock lock = provider().lock(job(Duration.ofMinutes(5), Duration.ZERO)).orElseThrow();
		lock.unlock();
		assertThatIllegalStateException().isThrownBy(lock::unlock);
	}

	@Test
	void isExtensible() {
		assertThat(provider()).isInstanceOf(ExtensibleLockProvider.class);
	}

	@Test
	void anExtendedLockOutlivesItsFirstLockAtMostFor() {
		SimpleLock lock = provider().lock(job(Duration.ofSeconds(2), Duration.ZERO)).orElseThrow();
		SimpleLock extended = lock.extend(Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
		assertThat(pttl()).isGreaterThan(2_000);
		assertThat(otherInstance().lock(job(Duration.ofMinutes(5), Duration.ZERO))).isEmpty();
		extended.unlock();
		assertUnlocked();
	}

	@Test
	void anUnlockedHandleCannotBeExtended() {
		SimpleLock lock = provider().lock(job(Duration.ofSeconds(2), Duration.ZERO)).orElseThrow();
		lock.unlock();
		assertUnlocked();
		assertThatIllegalStateException().isThrownBy(() -> lock.extend(Duration.ofSeconds(10), Duration.ZERO));
	}

	@Test
	void anExpiredLockIsNotExtended() {
		// the smallest TTL (53 ms): see aLockExpiresAfterLockAtMostFor
		SimpleLock lock = awaitLock(provider(), job(Duration.ofMillis(20), Duration.ZERO));
		NodeKeys.awaitTrue("the lock expired", PATIENCE, this::unlocked);
		assertThat(lock.extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
		assertUnlocked();
	}

	@Test
	void lockAtLeastForOfAnExtensionCountsFromTheExtension() {
		SimpleLock lock = provider().lock(job(Duration.ofSeconds(2), Duration.ZERO)).orElseThrow();
		SimpleLock extended = lock.extend(Duration.ofSeconds(10), Duration.ofSeconds(9)).orElseThrow();
		extended.unlock();
		assertLocked();
		assertThat(pttl()).isGreaterThan(8_000).isLessThanOrEqualTo(9_000);
	}

	@Test
	void aHandleIsExtendedOnce() {
		SimpleLock lock = provider().lock(job(Duration.ofSeconds(10), Duration.ZERO)).orElseThrow();
		SimpleLock extended = lock.extend(Duration.ofSeconds(10), Duration.ofSeconds(9)).orElseThrow();
		assertThatIllegalStateException().isThrownBy(() -> lock.extend(Duration.ofSeconds(10), Duration.ofSeconds(9)));
		extended.unlock();
	}

	@Test
	void anExtendedHandleCannotUnlock() {
		SimpleLock lock = provider().lock(job(Duration.ofSeconds(10), Duration.ZERO)).orElseThrow();
		SimpleLock extended = lock.extend(Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
		assertThatIllegalStateException().isThrownBy(lock::unlock);
		assertLocked();
		extended.unlock();
		assertUnlocked();
	}

	@Test
	void extensionsBeyondMaxExtensionsReturnEmpty() {
		RedlockLockProvider provider;
		try (Redlock bounded = TestRedlocks.on(this.nodes,
				TestRedlocks.SETTINGS.toBuilder().maxExtensions(2).build())) {
			provider = new RedlockLockProvider(bounded);
			SimpleLock lock = provider.lock(job(Duration.ofSeconds(10), Duration.ZERO)).orElseThrow();
			lock = lock.extend(Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
			lock = lock.extend(Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
			assertThat(lock.extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
			// the job may still run: its lock is left to expire at its lockAtMostFor
			assertLocked();
			assertThat(pttl()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(10).toMillis());
		}
	}

	@Test
	void anExtensionBeyondTheRestartQuarantineIsRenewedUpToIt() {
		Duration quarantine = Duration.ofSeconds(2);
		RedlockSettings settings = TestRedlocks.SETTINGS.toBuilder()
			.defaultTtl(Duration.ofSeconds(1))
			.restartQuarantine(quarantine)
			.build();
		try (Redlock quarantined = TestRedlocks.on(this.nodes, settings)) {
			RedlockLockProvider provider = new RedlockLockProvider(quarantined);
			// the kit's nodes may have been started just now: their own quarantine first
			awaitLock(provider, job(Duration.ofSeconds(1), Duration.ZERO)).unlock();
			SimpleLock lock = provider.lock(job(Duration.ofSeconds(1), Duration.ZERO)).orElseThrow();
			SimpleLock extended = lock.extend(Duration.ofMinutes(5), Duration.ZERO).orElseThrow();
			long extendedAt = System.nanoTime();
			assertThat(pttl()).isPositive().isLessThanOrEqualTo(quarantine.toMillis());
			// held past the quarantine, the TTL of every extension, by renewal
			NodeKeys.awaitTrue("held for longer than the quarantine", PATIENCE, () -> {
				assertLocked();
				return System.nanoTime() - extendedAt > quarantine.multipliedBy(5).dividedBy(4).toNanos();
			});
			assertThat(pttl()).isPositive().isLessThanOrEqualTo(quarantine.toMillis());
			extended.unlock();
			assertUnlocked();
		}
	}

	private RedlockLockProvider provider() {
		return new RedlockLockProvider(this.redlocks.here());
	}

	private RedlockLockProvider otherInstance() {
		return new RedlockLockProvider(this.redlocks.elsewhere());
	}

	private static LockConfiguration job(Duration atMost, Duration atLeast) {
		return new LockConfiguration(Instant.now(), JOB, atMost, atLeast);
	}

	private long pttl() {
		return NodeKeys.quorumPttl(this.nodes, KEY);
	}

	private boolean unlocked() {
		return NodeKeys.holding(this.nodes, KEY) == 0;
	}

	private void assertLocked() {
		assertThat(NodeKeys.holding(this.nodes, KEY)).as("nodes holding the job's lock").isGreaterThanOrEqualTo(2);
	}

	private void assertUnlocked() {
		NodeKeys.awaitTrue("the job's lock is gone from every node", PATIENCE, this::unlocked);
	}

	private static SimpleLock awaitLock(RedlockLockProvider provider, LockConfiguration job) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (true) {
			Optional<SimpleLock> lock = provider.lock(job);
			if (lock.isPresent()) {
				return lock.get();
			}
			if (System.nanoTime() - deadline > 0) {
				fail("the job's lock was not free within 10 s");
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
		}
	}

}
