package dev.redlock.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;

import dev.redlock.core.RedlockListener.LeaseLostEvent;
import dev.redlock.core.TestSupport.ManualTicker;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Lease#isLost()} and {@link Lease#onLost(Runnable)}: each way a lease is lost is
 * signalled once, and a lease released in time never is.
 */
@WithRedisNodes(count = 3)
class LeaseLostTests {

	private final RedlockSettings settings = TestSupport.SETTINGS.withRetryDelay(Duration.ofMillis(20));

	private final List<LeaseLostEvent> events = new CopyOnWriteArrayList<>();

	@Test
	void leaseThatOutlivesItsValidityIsSignalledWithoutAnyoneAsking(RedisNodes nodes) {
		List<String> threads = new CopyOnWriteArrayList<>();
		// the lease's clock stands still until the callback is registered: on a busy
		// machine the validity could otherwise run out before, and the callback would run
		// at once on the calling thread
		ManualTicker ticker = new ManualTicker();
		try (Redlock redlock = redlock(nodes, this.settings, ticker)) {
			Lease lease = redlock.acquire("outlived", Duration.ofMillis(200), Duration.ZERO);
			lease.onLost(() -> threads.add(Thread.currentThread().getName()));
			assertThat(threads).isEmpty();
			ticker.advance(Duration.ofSeconds(1));
			TestSupport.awaitTrue("the loss was signalled", Duration.ofSeconds(5), () -> !threads.isEmpty());
			assertThat(threads).containsExactly(redlock.internals().lossCallbacks().threadName());
			assertThat(lease.isLost()).isTrue();
			assertThat(lease.lossReason()).contains(LossReason.VALIDITY_RAN_OUT);
			lease.release();
			assertThat(threads).hasSize(1);
			assertThat(this.events).singleElement()
				.satisfies((event) -> assertThat(event.reason()).isEqualTo(LossReason.VALIDITY_RAN_OUT));
		}
	}

	@Test
	void callbackRegisteredAfterTheLossRunsAtOnceOnTheCallingThread(RedisNodes nodes) {
		// the validity runs out when the test moves the clock on, not while the single
		// attempt is still being made on a busy machine
		ManualTicker ticker = new ManualTicker();
		try (Redlock redlock = redlock(nodes, this.settings, ticker)) {
			Lease lease = redlock.acquire("late", Duration.ofMillis(100), Duration.ZERO);
			assertThat(lease.isValid()).isTrue();
			ticker.advance(Duration.ofSeconds(1));
			assertThat(lease.isValid()).isFalse();
			assertThat(lease.isLost()).isTrue();
			List<String> threads = new CopyOnWriteArrayList<>();
			lease.onLost(() -> threads.add(Thread.currentThread().getName()));
			assertThat(threads).containsExactly(Thread.currentThread().getName());
			assertThat(this.events).hasSize(1);
		}
	}

	@Test
	void releaseThatFindsTheLockExpiredMarksItLost(RedisNodes nodes) {
		// this holder's clock stands still: only the release can tell that the keys are
		// gone
		try (Redlock frozen = Redlock.builder()
			.nodes(nodes.uris())
			.settings(this.settings)
			.ticker(() -> 0L)
			.listener(TestSupport.onLeaseLost(this.events::add))
			.build()) {
			Lease lease = frozen.acquire("paused", Duration.ofMillis(200), Duration.ZERO);
			AtomicInteger callbacks = new AtomicInteger();
			lease.onLost(callbacks::incrementAndGet);
			TestSupport.awaitTrue("the keys expired", Duration.ofSeconds(5),
					() -> TestSupport.nodesWithKey(nodes, TestSupport.PREFIX + "paused") == 0);
			assertThat(lease.isLost()).isFalse();
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.EXPIRED);
			assertThat(lease.isLost()).isTrue();
			assertThat(lease.lossReason()).contains(LossReason.FOUND_EXPIRED);
			assertThat(callbacks).hasValue(1);
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.EXPIRED);
			assertThat(callbacks).hasValue(1);
			assertThat(this.events).hasSize(1);
		}
	}

	@Test
	void failedExtensionMarksTheLeaseLost(RedisNodes nodes) {
		try (Redlock redlock = redlock(nodes, this.settings)) {
			Lease lease = redlock.acquire("unextended", Duration.ofSeconds(10), Duration.ZERO);
			nodes.node(1).kill();
			nodes.node(2).kill();
			assertThat(lease.extend()).isFalse();
			assertThat(lease.isLost()).isTrue();
			assertThat(lease.isValid()).isFalse();
			assertThat(lease.lossReason()).contains(LossReason.EXTENSION_FAILED);
			assertThat(this.events).singleElement()
				.satisfies((event) -> assertThat(event.resource()).isEqualTo("unextended"));
		}
	}

	@Test
	void leaseReleasedInTimeIsNeverLost(RedisNodes nodes) {
		AtomicInteger callbacks = new AtomicInteger();
		// the lease's clock stands still until it is released, so that the
		// release is in time however long the machine keeps the test from
		// running; it is then moved past the validity, for a watch left behind to
		// find the lease run out
		ManualTicker ticker = new ManualTicker();
		Duration ttl = Duration.ofSeconds(1);
		try (Redlock redlock = redlock(nodes, this.settings, ticker)) {
			Lease lease = redlock.acquire("in-time", ttl, Duration.ZERO);
			lease.onLost(callbacks::incrementAndGet);
			long watchedAt = System.nanoTime();
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
			ticker.advance(ttl.multipliedBy(2));
			// past the moment the watch would have fired: a TTL after it was set
			long end = watchedAt + ttl.plusMillis(300).toNanos();
			while (System.nanoTime() - end < 0) {
				LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
			}
			assertThat(lease.isLost()).isFalse();
			assertThat(callbacks).hasValue(0);
			assertThat(this.events).isEmpty();
		}
	}

	@Test
	void leaseWorksFromAnotherThread(RedisNodes nodes) throws Exception {
		try (Redlock redlock = redlock(nodes, this.settings)) {
			Lease lease = redlock.acquire("handed-over", Duration.ofSeconds(10), Duration.ZERO).autoRenew();
			CompletableFuture<ReleaseOutcome> elsewhere = CompletableFuture.supplyAsync(() -> {
				assertThat(lease.isValid()).isTrue();
				assertThat(lease.isLost()).isFalse();
				assertThat(lease.extend()).isTrue();
				return lease.release();
			});
			assertThat(elsewhere.get(5, TimeUnit.SECONDS)).isEqualTo(ReleaseOutcome.RELEASED);
			assertThat(lease.isAutoRenewing()).isFalse();
			TestSupport.awaitNoKeys(nodes);
		}
	}

	private Redlock redlock(RedisNodes nodes, RedlockSettings settings) {
		return TestSupport.redlock(nodes, settings, TestSupport.onLeaseLost(this.events::add));
	}

	private Redlock redlock(RedisNodes nodes, RedlockSettings settings, ManualTicker ticker) {
		return Redlock.builder()
			.nodes(nodes.uris())
			.settings(settings)
			.ticker(ticker)
			.listener(TestSupport.onLeaseLost(this.events::add))
			.build();
	}

}
