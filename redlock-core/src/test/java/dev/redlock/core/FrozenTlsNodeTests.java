package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import dev.redlock.core.RedlockListener.ExtendEvent;
import dev.redlock.core.RedlockListener.ExtendOutcome;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.TestCertificates;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * {@link FrozenSubscriberTests} over TLS, with leases renewed meanwhile. A frozen node's
 * kernel accepts data until its buffers fill, then a write blocks with no timeout of its
 * own; the stalled subscription write is cut after the node timeout by aborting its
 * connection from the renewal thread. Closing a TLS socket writes a closing alert, which
 * can wait behind the stalled write (the JDK's TLS gives up on it only when
 * {@code SO_LINGER} is on): if the abort waited, the writing caller, the renewal thread
 * (so every renewed lease) and {@code close()} would all be held for as long as the node
 * stays frozen.
 */
@WithRedisNodes(count = 3, tls = true)
class FrozenTlsNodeTests {

	/**
	 * The tests' 1 s, not less: a renewal that misses it loses its lease, which a busy
	 * machine must not cause.
	 */
	private static final Duration NODE_TIMEOUT = TestSupport.SETTINGS.nodeTimeout();

	private static final Duration WAIT = Duration.ofMillis(1);

	/** More subscription traffic than a frozen node's socket buffers take. */
	private static final int ROUNDS = 6_000;

	/** Renewed a third of it after each validation: every 2 s. */
	private static final Duration RENEWED_TTL = Duration.ofSeconds(6);

	private static final int RENEWED_LEASES = 3;

	/**
	 * The contended lock's: it must outlast the calls, which took more than a minute on a
	 * machine whose cores were all busy.
	 */
	private static final Duration HELD_TTL = Duration.ofMinutes(10);

	private static final String RENEWED = "renewed-";

	@ParameterizedTest(name = "virtual caller: {0}")
	@MethodSource("dev.redlock.core.TestThreads#kinds")
	void aFrozenTlsNodeHoldsNoCallerNorRenewalNorClose(boolean virtual, RedisNodes nodes) throws Exception {
		TlsSettings tls = TlsSettings.of(TlsTests.trusting(TestCertificates.get()));
		AtomicInteger renewals = new AtomicInteger();
		RedlockListener countsRenewals = new RedlockListener() {
			@Override
			public void leaseExtended(ExtendEvent event) {
				if (event.resource().startsWith(RENEWED) && event.outcome() == ExtendOutcome.EXTENDED) {
					renewals.incrementAndGet();
				}
			}
		};
		String resource = "frozen-tls-" + "x".repeat(1_000);
		// what went wrong, all of it: a hung call also stops the renewals and close()
		List<String> failures = new ArrayList<>();
		Redlock waiter = builder(nodes, tls).listener(countsRenewals).build();
		try (Redlock holder = builder(nodes, tls).build()) {
			Lease held = holder.acquire(resource, HELD_TTL, Duration.ZERO);
			List<Lease> renewed = new ArrayList<>();
			for (int i = 0; i < RENEWED_LEASES; i++) {
				renewed.add(waiter.acquire(RENEWED + i, RENEWED_TTL, Duration.ZERO).autoRenew());
			}
			// the subscription connections are open over TLS before the freeze: a thread
			// waits until node 0 shows a subscriber
			TestThreads.Running<Void> waiting = TestThreads.start(virtual, () -> {
				try {
					waiter.acquire(resource, Duration.ofSeconds(10), Duration.ofSeconds(30)).release();
				}
				catch (LockNotAcquiredException ex) {
					// the wait ends when the lock is released below
				}
				return null;
			});
			TestSupport.awaitTrue("node 0 has a subscriber", Duration.ofSeconds(10),
					() -> nodes.node(0).command("CLIENT", "LIST").contains("sub=1"));
			held.release();
			waiting.await(Duration.ofSeconds(10));
			held = holder.acquire(resource, HELD_TTL, Duration.ofSeconds(10));
			nodes.node(0).pause();
			try {
				// each call: an attempt, a wait in the queue, at most two node timeouts
				// of clean-up; the slack is for a loaded machine
				Duration bound = WAIT.plus(NODE_TIMEOUT.multipliedBy(3)).plusSeconds(2);
				long start = System.nanoTime();
				long slowest = 0;
				int made = 0;
				for (int i = 0; i < ROUNDS; i++) {
					long callStart = System.nanoTime();
					TestThreads.Running<Void> call = TestThreads.start(virtual, () -> {
						waitOnce(waiter, resource);
						return null;
					});
					try {
						call.await(bound);
					}
					catch (TimeoutException ex) {
						failures.add(String.format("call %d held for more than %d ms by the frozen node", i,
								bound.toMillis()));
						break;
					}
					slowest = Math.max(slowest, System.nanoTime() - callStart);
					made++;
				}
				System.out.printf(
						"[frozen tls node] %d waits on a %d-byte key in %d ms with a node frozen, slowest %d ms%n",
						made, resource.length(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
						TimeUnit.NANOSECONDS.toMillis(slowest));
				// every renewed lease renewed once more on the other two nodes: within a
				// renewal period and a round, a TTL being ample
				int renewedBefore = renewals.get();
				if (!awaitTrue(RENEWED_TTL, () -> renewals.get() >= renewedBefore + RENEWED_LEASES)) {
					failures.add(String.format("renewals stopped: %d in %d s after the calls, %d expected",
							renewals.get() - renewedBefore, RENEWED_TTL.toSeconds(), RENEWED_LEASES));
				}
				for (Lease lease : renewed) {
					if (lease.isLost() || !lease.isValid()) {
						failures.add(String.format("%s lost (%s)", lease.resource(),
								lease.lossReason().map(Object::toString).orElse("validity over")));
					}
				}
				TestThreads.Running<Void> closing = TestThreads.start(false, () -> {
					waiter.close();
					return null;
				});
				try {
					closing.await(NODE_TIMEOUT.multipliedBy(2).plusSeconds(2));
					assertThat(waiter.isClosed()).isTrue();
				}
				catch (TimeoutException ex) {
					failures.add("close() held by the frozen node");
				}
			}
			finally {
				nodes.node(0).resume();
			}
			assertThat(failures).as("with a TLS node frozen").isEmpty();
			held.release();
		}
		finally {
			waiter.close();
		}
	}

	private static Redlock.Builder builder(RedisNodes nodes, TlsSettings tls) {
		List<String> uris = nodes.nodes().stream().map(RedisNode::tlsUri).toList();
		return Redlock.builder().nodes(uris).settings(TestSupport.SETTINGS).tls(tls);
	}

	/**
	 * One contended attempt, a short wait in the queue, and out: subscribe, unsubscribe.
	 */
	private static void waitOnce(Redlock waiter, String resource) {
		try {
			waiter.acquire(resource, Duration.ofSeconds(10), WAIT).release();
			fail("the lock is held: no call may get it");
		}
		catch (LockNotAcquiredException ex) {
			// contended, as expected
		}
	}

	/** Polls until the condition holds or the time is up; whether it held. */
	private static boolean awaitTrue(Duration timeout, BooleanSupplier condition) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() - deadline > 0) {
				return false;
			}
			LockSupport.parkNanos(1_000_000);
		}
		return true;
	}

}
