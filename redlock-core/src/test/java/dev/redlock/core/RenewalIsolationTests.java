package dev.redlock.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import dev.redlock.core.RedlockListener.ExtendEvent;
import dev.redlock.core.RedlockListener.ReleaseEvent;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Renewal answers to one bound, and neither listeners nor loss callbacks run where they
 * could hold up a lease or its renewal.
 */
@WithRedisNodes(count = 3)
class RenewalIsolationTests {

	/**
	 * Leaves more than half a second between a renewal's due time and the end of the
	 * validity: on a busy machine the renewal thread may wait for a CPU.
	 */
	private static final Duration TTL = Duration.ofSeconds(1);

	@Test
	void automaticRenewalIsBoundedByMaxHoldNotByMaxExtensions(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS.toBuilder().maxExtensions(1).build())) {
			Lease lease = redlock.acquire("renewed", TTL, Duration.ZERO).autoRenew(Duration.ofMinutes(1));
			TestSupport.awaitTrue("renewed more often than maxExtensions", Duration.ofSeconds(10),
					() -> lease.extensionAttempts() > 1);
			assertThat(lease.isValid()).isTrue();
			assertThat(lease.isAutoRenewing()).isTrue();
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
		}
	}

	/**
	 * A listener that touches the lease, from another thread, is not blocked by the
	 * lease's own lock.
	 */
	@Test
	void listenersAreToldOutsideTheLeasesLock(RedisNodes nodes) throws Exception {
		AtomicReference<Lease> current = new AtomicReference<>();
		List<String> seen = new CopyOnWriteArrayList<>();
		RedlockListener touching = new RedlockListener() {

			@Override
			public void leaseExtended(ExtendEvent event) {
				seen.add("extended: " + touch(current.get()));
			}

			@Override
			public void leaseReleased(ReleaseEvent event) {
				seen.add("released: " + touch(current.get()));
			}

		};
		try (Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS, touching)) {
			Lease lease = redlock.acquire("touched", Duration.ofSeconds(10), Duration.ZERO);
			current.set(lease);
			assertThat(lease.extend()).isTrue();
			lease.release();
		}
		assertThat(seen).containsExactly("extended: touched", "released: touched");
	}

	/**
	 * Registers a loss callback from another thread, which takes the lease's lock:
	 * "touched" if that was not blocked.
	 */
	private static String touch(Lease lease) {
		CompletableFuture<Lease> other = CompletableFuture.supplyAsync(() -> lease.onLost(() -> {
		}));
		try {
			other.get(2, TimeUnit.SECONDS);
			return "touched";
		}
		catch (TimeoutException ex) {
			return "blocked by the lease's lock";
		}
		catch (Exception ex) {
			return "failed: " + ex;
		}
	}

	/**
	 * A loss callback that blocks does not hold up the renewal of the instance's other
	 * leases.
	 */
	@Test
	void aSlowLossCallbackDelaysNoOtherRenewal(RedisNodes nodes) throws Exception {
		CountDownLatch callbackMayEnd = new CountDownLatch(1);
		CountDownLatch callbackRunning = new CountDownLatch(1);
		try (Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS)) {
			Lease doomed = redlock.acquire("doomed", TTL, Duration.ZERO).autoRenew();
			doomed.onLost(() -> {
				callbackRunning.countDown();
				try {
					callbackMayEnd.await(10, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			});
			Lease healthy = redlock.acquire("healthy", TTL, Duration.ZERO).autoRenew();
			try {
				for (int i = 0; i < nodes.size(); i++) {
					nodes.node(i).command("DEL", "redlock:doomed");
				}
				assertThat(callbackRunning.await(10, TimeUnit.SECONDS)).as("the loss was found").isTrue();
				int renewals = healthy.extensionAttempts();
				TestSupport.awaitTrue("the other lease was renewed meanwhile", Duration.ofSeconds(10),
						() -> healthy.extensionAttempts() >= renewals + 2);
				assertThat(healthy.isValid()).isTrue();
			}
			finally {
				callbackMayEnd.countDown();
			}
			assertThat(healthy.release()).isEqualTo(ReleaseOutcome.RELEASED);
		}
	}

}
