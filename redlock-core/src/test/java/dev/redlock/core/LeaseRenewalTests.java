package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import dev.redlock.core.RedlockListener.LeaseLostEvent;
import dev.redlock.core.internal.thread.RenewalScheduler;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@link Lease#autoRenew()} on three real nodes, with a TTL of 1 s: a renewal is due a
 * third of the TTL after the last validation, which leaves more than half a second for
 * the renewal thread to get a CPU and the nodes to answer on a busy machine before the
 * lease would run out (with 300 ms, a renewal that waited for a CPU came too late).
 */
@WithRedisNodes(count = 3)
class LeaseRenewalTests {

	private static final Duration TTL = Duration.ofSeconds(1);

	private final RedlockSettings settings = TestSupport.SETTINGS.withRetryDelay(Duration.ofMillis(20));

	@Test
	void autoRenewedLeaseIsHeldForThreeTimesItsTtl(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			// every node's connections open first, so that every node gets the SET, not
			// only the quorum the round waits for
			TestSupport.awaitWarmPools(redlock);
			Lease lease = redlock.acquire("renewed", TTL, Duration.ZERO).autoRenew();
			// the round returns on a quorum; the last node's SET lands a moment later
			TestSupport.awaitTrue("the lock is on every node", Duration.ofSeconds(5),
					() -> TestSupport.nodesWithKey(nodes, "redlock:renewed") == nodes.size());
			String value = nodes.node(0).command("GET", "redlock:renewed");
			long end = System.nanoTime() + TTL.multipliedBy(3).toNanos();
			int checks = 0;
			Duration seenValidAfter = Duration.ZERO;
			// the "method" runs: it checks the lease and the nodes between steps of work
			while (System.nanoTime() - end < 0) {
				Duration heldFor = lease.heldFor();
				assertThat(lease.isValid()).isTrue();
				seenValidAfter = heldFor;
				assertThat(lease.isAutoRenewing()).isTrue();
				for (RedisNode node : nodes.nodes()) {
					assertThat(node.command("GET", "redlock:renewed")).isEqualTo(value);
				}
				checks++;
				LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
			}
			int extensions = lease.extensionAttempts();
			Duration heldFor = lease.heldFor();
			assertThat(heldFor).isGreaterThanOrEqualTo(TTL.multipliedBy(3));
			// at least one renewal per TTL, or the lease would not have been valid that
			// long; at most one per third of a TTL, however late the renewal thread ran
			assertThat(extensions).isBetween((int) (seenValidAfter.toNanos() / TTL.toNanos()),
					(int) (heldFor.toNanos() / TTL.dividedBy(3).toNanos()));
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
			TestSupport.awaitTrue("two renewals", Duration.ofSeconds(10), () -> lease.extensionAttempts() >= 2);
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
			assertThat(lease.isAutoRenewing()).isFalse();
			int attempts = lease.extensionAttempts();
			// the release returns on a quorum; the last node deletes the key a
			// moment later
			TestSupport.awaitTrue("the key is gone from every node", Duration.ofSeconds(5),
					() -> TestSupport.nodesWithKey(nodes, "redlock:stopped") == 0);
			// one renewal interval (TTL / 3) plus half a second: no key comes back, no
			// extension is tried
			long end = System.nanoTime() + TTL.dividedBy(3).plusMillis(500).toNanos();
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
		Duration maxHold = TTL.multipliedBy(2);
		List<String> lost = new CopyOnWriteArrayList<>();
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			// connections open first: the key's life is timed from the acquisition, not
			// from a wait for the first connections
			TestSupport.awaitWarmPools(redlock);
			long start = System.nanoTime();
			Lease lease = redlock.acquire("bounded", TTL, Duration.ZERO).autoRenew(maxHold);
			lease.onLost(() -> lost.add(Thread.currentThread().getName()));
			TestSupport.awaitTrue("the key expired on every node", maxHold.plus(TTL).plusSeconds(5),
					() -> TestSupport.nodesWithKey(nodes, "redlock:bounded") == 0);
			Duration keyLived = Duration.ofNanos(System.nanoTime() - start);
			assertThat(keyLived).isGreaterThanOrEqualTo(maxHold);
			// the last renewal starts before maxHold and the key expires a TTL after
			// it; a second more covers the acquisition round and a test thread that
			// waited for a CPU before it saw the key gone
			assertThat(keyLived).isLessThan(maxHold.plus(TTL).plusSeconds(1));
			assertThat(lease.isAutoRenewing()).isFalse();
			TestSupport.awaitTrue("the loss was signalled", Duration.ofSeconds(5), () -> !lost.isEmpty());
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
			TestSupport.awaitTrue("the failed renewal was signalled", Duration.ofSeconds(5),
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

	/**
	 * Counts the renewal threads started meanwhile, not every one in the JVM: one that
	 * another test's instance started may end while this test runs.
	 */
	@Test
	void manyRenewedLeasesShareOneThread(RedisNodes nodes) {
		Set<Thread> before = renewalThreads();
		String renewalThread;
		try (Redlock redlock = TestSupport.redlock(nodes, this.settings)) {
			renewalThread = redlock.internals().renewals().threadName();
			assertThat(threadsNamed(renewalThread)).isZero();
			List<Lease> leases = new ArrayList<>();
			for (int i = 0; i < 20; i++) {
				leases.add(redlock.acquire("many:" + i, TTL, Duration.ZERO).autoRenew());
			}
			TestSupport.awaitTrue("every lease renewed twice", Duration.ofSeconds(10),
					() -> leases.stream().allMatch((lease) -> lease.extensionAttempts() >= 2));
			assertThat(threadsNamed(renewalThread)).isOne();
			Set<Thread> started = renewalThreads();
			started.removeAll(before);
			assertThat(started).extracting(Thread::getName).containsExactly(renewalThread);
			assertThat(leases).allSatisfy((lease) -> assertThat(lease.isValid()).isTrue());
			leases.forEach(Lease::release);
			TestSupport.awaitNoKeys(nodes);
			System.out.printf("[renewal] 20 renewed leases: %d renewal thread(s)%n", threadsNamed(renewalThread));
		}
		TestSupport.awaitTrue("the renewal thread stopped with its Redlock", Duration.ofSeconds(5),
				() -> threadsNamed(renewalThread) == 0);
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

	private static Set<Thread> renewalThreads() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().startsWith(RenewalScheduler.THREAD_NAME_PREFIX))
			.collect(Collectors.toCollection(HashSet::new));
	}

	private static long threadsNamed(String name) {
		return Thread.getAllStackTraces().keySet().stream().filter((thread) -> thread.getName().equals(name)).count();
	}

}
