package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;

import dev.redlock.core.RedlockListener.LeaseLostEvent;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@link Lease#autoRenew()} on three real nodes, with TTLs of a few hundred milliseconds.
 */
@WithRedisNodes(count = 3)
class LeaseRenewalTests {

	private static final Duration TTL = Duration.ofMillis(300);

	private final RedlockSettings settings = TestSupport.SETTINGS.withRetryDelay(Duration.ofMillis(20));

	@Test
	void autoRenewedLeaseIsHeldForTenTimesItsTtl(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			Lease lease = redlock.acquire("renewed", TTL, Duration.ZERO).autoRenew();
			String value = nodes.node(0).command("GET", "redlock:renewed");
			long end = System.nanoTime() + TTL.multipliedBy(10).toNanos();
			int checks = 0;
			// the "method" runs: it checks the lease and the nodes between steps of work
			while (System.nanoTime() - end < 0) {
				assertThat(lease.isValid()).isTrue();
				assertThat(lease.isAutoRenewing()).isTrue();
				for (RedisNode node : nodes.nodes()) {
					assertThat(node.command("GET", "redlock:renewed")).isEqualTo(value);
				}
				checks++;
				LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
			}
			assertThat(lease.heldFor()).isGreaterThanOrEqualTo(TTL.multipliedBy(10));
			assertThat(lease.extensionAttempts()).isBetween(25, 35);
			assertThat(lease.isLost()).isFalse();
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
			TestSupport.awaitNoKeys(nodes);
			System.out.printf("[renewal] %d ms TTL lease held %d ms with %d renewals, %d checks on the nodes%n",
					TTL.toMillis(), lease.heldFor().toMillis(), lease.extensionAttempts(), checks);
		}
	}

	@Test
	void releaseStopsRenewalAndNothingIsRenewedAfterwards(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			Lease lease = redlock.acquire("stopped", TTL, Duration.ZERO).autoRenew();
			TestSupport.awaitTrue("two renewals", Duration.ofSeconds(2), () -> lease.extensionAttempts() >= 2);
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
			assertThat(lease.isAutoRenewing()).isFalse();
			int attempts = lease.extensionAttempts();
			// one renewal interval (TTL / 3) plus a margin: no key comes back, no
			// extension is tried
			long end = System.nanoTime() + TTL.toNanos();
			while (System.nanoTime() - end < 0) {
				for (RedisNode node : nodes.nodes()) {
					assertThat(node.command("EXISTS", "redlock:stopped")).isEqualTo("0");
				}
				LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
			}
			assertThat(lease.extensionAttempts()).isEqualTo(attempts);
			assertThat(lease.isLost()).isFalse();
		}
	}

	@Test
	void renewalStopsAtMaxHoldAndTheLeaseThenRunsOut(RedisNodes nodes) {
		Duration maxHold = Duration.ofMillis(900);
		List<String> lost = new CopyOnWriteArrayList<>();
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			long start = System.nanoTime();
			Lease lease = redlock.acquire("bounded", TTL, Duration.ZERO).autoRenew(maxHold);
			lease.onLost(() -> lost.add(Thread.currentThread().getName()));
			TestSupport.awaitTrue("the key expired on every node", maxHold.plus(TTL).plusSeconds(1),
					() -> TestSupport.keysOnNodes(nodes) == 0);
			Duration keyLived = Duration.ofNanos(System.nanoTime() - start);
			assertThat(keyLived).isGreaterThanOrEqualTo(maxHold);
			assertThat(keyLived).isLessThan(maxHold.plus(TTL).plusMillis(150));
			assertThat(lease.isAutoRenewing()).isFalse();
			TestSupport.awaitTrue("the loss was signalled", Duration.ofSeconds(1), () -> !lost.isEmpty());
			assertThat(lost).containsExactly(redlock.internals().lossCallbacks().threadName());
			assertThat(lease.lossReason()).contains(LossReason.VALIDITY_RAN_OUT);
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.EXPIRED);
			assertThat(lost).hasSize(1);
			System.out.printf("[renewal] maxHold %d ms, TTL %d ms: key lived %d ms%n", maxHold.toMillis(),
					TTL.toMillis(), keyLived.toMillis());
		}
	}

	@Test
	void failedRenewalMarksTheLeaseLostAtOnceAndCallsBackOnce(RedisNodes nodes) {
		List<LeaseLostEvent> events = new CopyOnWriteArrayList<>();
		AtomicInteger callbacks = new AtomicInteger();
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings, TestSupport.onLeaseLost(events::add))) {
			Lease lease = redlock.acquire("doomed", Duration.ofSeconds(3), Duration.ZERO).autoRenew();
			lease.onLost(() -> {
				throw new IllegalStateException("a failing callback is ignored");
			});
			lease.onLost(callbacks::incrementAndGet);
			nodes.node(0).kill();
			nodes.node(1).kill();
			// renewal is due after a second; the lease would stay valid for about two
			// more
			long killed = System.nanoTime();
			TestSupport.awaitTrue("the failed renewal was signalled", Duration.ofSeconds(2),
					() -> callbacks.get() == 1);
			Duration detectedAfter = Duration.ofNanos(System.nanoTime() - killed);
			assertThat(lease.isLost()).isTrue();
			assertThat(lease.lossReason()).contains(LossReason.EXTENSION_FAILED);
			assertThat(lease.isValid()).isFalse();
			assertThat(lease.remainingValidity()).isZero();
			assertThat(lease.isAutoRenewing()).isFalse();
			assertThat(lease.extend()).isFalse();
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.UNKNOWN);
			assertThat(callbacks).hasValue(1);
			assertThat(events).singleElement().satisfies((event) -> {
				assertThat(event.lockName()).isEqualTo(Redlock.DEFAULT_LOCK_NAME);
				assertThat(event.resource()).isEqualTo("doomed");
				assertThat(event.reason()).isEqualTo(LossReason.EXTENSION_FAILED);
			});
			System.out.printf("[renewal] majority killed: lease reported lost after %d ms%n", detectedAfter.toMillis());
		}
	}

	@Test
	void manyRenewedLeasesShareOneThread(RedisNodes nodes) {
		long before = renewalThreads();
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			assertThat(threadsNamed(redlock.internals().renewals().threadName())).isZero();
			List<Lease> leases = new ArrayList<>();
			for (int i = 0; i < 50; i++) {
				leases.add(redlock.acquire("many:" + i, TTL, Duration.ZERO).autoRenew());
			}
			TestSupport.awaitTrue("every lease renewed twice", Duration.ofSeconds(3),
					() -> leases.stream().allMatch((lease) -> lease.extensionAttempts() >= 2));
			assertThat(threadsNamed(redlock.internals().renewals().threadName())).isOne();
			assertThat(renewalThreads()).isEqualTo(before + 1);
			assertThat(leases).allSatisfy((lease) -> assertThat(lease.isValid()).isTrue());
			leases.forEach(Lease::release);
			TestSupport.awaitNoKeys(nodes);
			System.out.printf("[renewal] 50 renewed leases: %d renewal thread(s)%n",
					threadsNamed(redlock.internals().renewals().threadName()));
		}
		TestSupport.awaitTrue("the renewal thread stopped with its Redlock", Duration.ofSeconds(2),
				() -> renewalThreads() == before);
	}

	@Test
	void releasedOrClosedLeasesCannotBeRenewed(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			Lease lease = redlock.acquire("done", TTL, Duration.ZERO);
			assertThatIllegalArgumentException().isThrownBy(() -> lease.autoRenew(Duration.ZERO))
				.withMessageContaining("maxHold");
			lease.release();
			assertThatIllegalStateException().isThrownBy(lease::autoRenew).withMessageContaining("released");
			Lease open = redlock.acquire("open", TTL, Duration.ZERO);
			redlock.close();
			assertThatIllegalStateException().isThrownBy(open::autoRenew).withMessageContaining("closed");
		}
	}

	private static long renewalThreads() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().startsWith(RenewalScheduler.THREAD_NAME_PREFIX))
			.count();
	}

	private static long threadsNamed(String name) {
		return Thread.getAllStackTraces().keySet().stream().filter((thread) -> thread.getName().equals(name)).count();
	}

}
