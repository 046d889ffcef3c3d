package dev.redlock.core;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import dev.redlock.core.RedlockListener.NodeCommand;
import dev.redlock.core.RedlockListener.NodeOutcome;
import dev.redlock.core.RedlockListener.NodeRequestEvent;
import dev.redlock.core.TestSupport.ManualTicker;
import dev.redlock.core.TestThreads.Running;
import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Waiting for a lock: a waiter takes a released lock at once, whether this instance or
 * another released it, instead of sleeping out the retry delay; threads of one instance
 * take turns in arrival order; an instance that re-acquires at once does not keep a
 * waiter elsewhere out; and when no notice comes, waiters still poll. Two {@code Redlock}
 * instances stand for two application instances.
 */
@WithRedisNodes(count = 3)
class WaitingTests {

	private static final Duration TTL = Duration.ofSeconds(10);

	/**
	 * So long that a waiter that polled instead of hearing of the release could not make
	 * the bounds below.
	 */
	private static final RedlockSettings NO_POLLING = TestSupport.SETTINGS.withRetryDelay(Duration.ofSeconds(20));

	/** A bound far below the shortest retry delay of {@link #NO_POLLING} (half of it). */
	private static final Duration WELL_BEFORE_A_POLL = Duration.ofSeconds(3);

	@Test
	void aWaiterOfAnotherInstanceTakesTheLockWhenItIsReleased(RedisNodes nodes) throws Exception {
		try (Redlock holder = TestSupport.redlock(nodes, NO_POLLING);
				Redlock waiter = TestSupport.redlock(nodes, NO_POLLING)) {
			holdWithAWaiterElsewhere(nodes, holder, waiter, "handed").handOver();
		}
	}

	@Test
	void aWaiterOfTheSameInstanceTakesTheLockWhenItIsReleased(RedisNodes nodes) throws Exception {
		try (Redlock redlock = TestSupport.redlock(nodes, NO_POLLING)) {
			holdWithAWaiter(redlock, "handed").handOver();
			assertThat(redlock.waitingThreads()).isZero();
		}
	}

	@Test
	void threadsOfOneInstanceTakeTheLockInTheOrderTheyCame(RedisNodes nodes) throws Exception {
		List<Integer> order = new CopyOnWriteArrayList<>();
		try (Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS)) {
			Lease held = redlock.acquire("queue", TTL, Duration.ZERO);
			List<Running<Void>> waiters = new CopyOnWriteArrayList<>();
			for (int i = 1; i <= 5; i++) {
				int number = i;
				waiters.add(TestThreads.start(false, () -> {
					try (Lease lease = redlock.acquire("queue", TTL, Duration.ofSeconds(30))) {
						order.add(number);
					}
					return null;
				}));
				TestSupport.awaitTrue(number + " threads wait", Duration.ofSeconds(5),
						() -> redlock.waitingThreads() == number);
			}
			held.release();
			for (Running<Void> waiting : waiters) {
				waiting.await(Duration.ofSeconds(30));
			}
		}
		assertThat(order).containsExactly(1, 2, 3, 4, 5);
	}

	/**
	 * Without the yield, the looping instance would win nearly every race: its next
	 * attempt leaves as soon as its release returns, while the other instance still has
	 * to hear of the release.
	 */
	@Test
	void anInstanceThatReacquiresAtOnceDoesNotKeepAWaiterElsewhereOut(RedisNodes nodes) throws Exception {
		AtomicBoolean stop = new AtomicBoolean();
		AtomicInteger loops = new AtomicInteger();
		try (Redlock greedy = TestSupport.redlock(nodes, NO_POLLING);
				Redlock patient = TestSupport.redlock(nodes, NO_POLLING)) {
			Running<Void> looping = TestThreads.start(false, () -> {
				while (!stop.get()) {
					greedy.acquire("contended", TTL, Duration.ofSeconds(30)).release();
					loops.incrementAndGet();
				}
				return null;
			});
			TestSupport.awaitTrue("the greedy instance loops", Duration.ofSeconds(5), () -> loops.get() > 10);
			try {
				Running<Lease> waiting = startWaiting(patient, "contended", Duration.ofSeconds(30));
				waiting.await(WELL_BEFORE_A_POLL).release();
			}
			finally {
				stop.set(true);
				looping.await(Duration.ofSeconds(30));
			}
		}
	}

	/**
	 * Turns between instances: a release that another instance waits for goes to that
	 * instance's waiter, although a thread of the releasing instance waits too and is
	 * woken at once. The notice reaches the other instance as soon as the first node has
	 * deleted the key, while the releasing instance still waits for a quorum, and then
	 * the releasing instance holds back for a short window, which ends early once the
	 * other instance has had its turn. The window is a few milliseconds, which a busy
	 * machine can keep the other instance from using: here the releasing instance's clock
	 * stands still until the other instance has had the lock, so that the window cannot
	 * run out before (nor can a waiter's attempt end up timed across a jump of the
	 * clock), and every release must go to the other instance (about 35 of 40 did without
	 * the window, on an idle machine). Each round has a key and a releasing instance of
	 * its own, so that nothing a round left in flight can wake the next round's waiter.
	 */
	@Test
	void aReleaseWaitedForElsewhereGoesToTheWaiterElsewhere(RedisNodes nodes) throws Exception {
		int rounds = 40;
		int toTheOtherInstance = 0;
		try (Redlock other = TestSupport.redlock(nodes, NO_POLLING)) {
			for (int i = 0; i < rounds; i++) {
				String resource = "turns-" + i;
				ManualTicker releasingClock = new ManualTicker();
				AtomicInteger refusals = new AtomicInteger();
				try (Redlock releasing = Redlock.builder()
					.nodes(nodes.uris())
					.settings(NO_POLLING)
					.ticker(releasingClock)
					.listener(refusalsCounted(refusals))
					.build()) {
					// every node holds the lock before anyone waits for it
					TestSupport.awaitWarmPools(releasing);
					Lease held = releasing.acquire(resource, TTL, Duration.ZERO);
					TestSupport.awaitTrue("the lock is on every node", Duration.ofSeconds(5),
							() -> TestSupport.nodesWithKey(nodes, TestSupport.PREFIX + resource) == nodes.size());
					AtomicReference<String> first = new AtomicReference<>();
					Running<Void> local = TestThreads.start(false, () -> {
						try (Lease lease = releasing.acquire(resource, TTL, Duration.ofSeconds(30))) {
							first.compareAndSet(null, "same instance");
						}
						return null;
					});
					Running<Void> elsewhere = TestThreads.start(false, () -> {
						try (Lease lease = other.acquire(resource, TTL, Duration.ofSeconds(30))) {
							first.compareAndSet(null, "other instance");
						}
						return null;
					});
					TestSupport.awaitTrue("a thread of each instance waits", Duration.ofSeconds(5),
							() -> releasing.waitingThreads() == 1 && other.waitingThreads() == 1);
					TestSupport.awaitSubscribed(nodes, resource, 2);
					// the waiter here tried once, then again once its subscription was
					// confirmed (3 refusals each, the last may be read late): nothing
					// more wakes it but a release, so it cannot try while the release is
					// under way, before the window is set
					TestSupport.awaitTrue("the waiter here tried again once subscribed", Duration.ofSeconds(5),
							() -> refusals.get() >= 5);
					held.release();
					elsewhere.await(WELL_BEFORE_A_POLL);
					// the clock runs again, from where it stood: a window the releasing
					// thread set only after the other instance's turn (it waited for a
					// CPU meanwhile) ends a few milliseconds later
					releasingClock.run();
					local.await(WELL_BEFORE_A_POLL);
					if ("other instance".equals(first.get())) {
						toTheOtherInstance++;
					}
				}
			}
		}
		assertThat(toTheOtherInstance).as("releases that went to the other instance, of %d", rounds).isEqualTo(rounds);
	}

	/**
	 * A waiter elsewhere hears of a release from the first node that deletes the key and
	 * tries at once, while the release is still on its way to the other nodes: it loses
	 * to the very lock being released (a couple of quick retries too, when the release is
	 * slow), and would then sleep out the retry delay. It tries again once a quorum of
	 * nodes has announced the release. Here the release reaches two of the three nodes a
	 * second late; on a busy machine a releasing thread that waits for a CPU between its
	 * writes does the same (aReleaseWaitedForElsewhereGoesToTheWaiterElsewhere failed
	 * that way about one run in six).
	 */
	@Test
	void aWaiterElsewhereThatTriedWhileTheReleaseWasUnderWayTriesAgainOnceAQuorumReleased(RedisNodes nodes)
			throws Exception {
		Duration late = Duration.ofSeconds(1);
		AtomicInteger refusals = new AtomicInteger();
		try (LatencyProxy second = LatencyProxy.to(nodes.node(1), Duration.ZERO);
				LatencyProxy third = LatencyProxy.to(nodes.node(2), Duration.ZERO);
				Redlock releasing = Redlock.builder()
					.nodes(List.of(nodes.node(0).uri(), second.uri(), third.uri()))
					.settings(NO_POLLING.withNodeTimeout(late.multipliedBy(4)))
					.build();
				Redlock waiter = TestSupport.redlock(nodes, NO_POLLING, refusalsCounted(refusals))) {
			Lease held = releasing.acquire("under-way", TTL, Duration.ZERO);
			Running<Lease> waiting = startWaiting(waiter, "under-way", Duration.ofSeconds(30));
			TestSupport.awaitSubscribed(nodes, "under-way", 1);
			// it tried once, then again once subscribed: 3 refusals each
			TestSupport.awaitTrue("the waiter tried again once subscribed", Duration.ofSeconds(5),
					() -> refusals.get() == 6);
			int refusedBeforeTheRelease = refusals.get();
			second.delay(late);
			third.delay(late);
			held.release();
			waiting.await(WELL_BEFORE_A_POLL).release();
			assertThat(refusals.get()).as("refusals of the attempts made while the release was under way")
				.isGreaterThan(refusedBeforeTheRelease);
		}
	}

	/** A listener that counts the nodes' refusals of acquisitions. */
	private static RedlockListener refusalsCounted(AtomicInteger refusals) {
		return new RedlockListener() {
			@Override
			public void nodeRequestFinished(NodeRequestEvent event) {
				if (event.command() == NodeCommand.ACQUIRE && event.outcome() == NodeOutcome.REJECTED) {
					refusals.incrementAndGet();
				}
			}
		};
	}

	@Test
	void twoInstancesOfEightThreadsEachAllGetTheLockAndNeverTogether(RedisNodes nodes) throws Exception {
		int threadsPerInstance = 8;
		AtomicInteger holders = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		AtomicBoolean stop = new AtomicBoolean();
		int[] acquisitions = new int[2 * threadsPerInstance];
		try (Redlock first = TestSupport.redlock(nodes, NO_POLLING);
				Redlock second = TestSupport.redlock(nodes, NO_POLLING)) {
			List<Running<Void>> threads = new CopyOnWriteArrayList<>();
			CountDownLatch everyoneHadATurn = new CountDownLatch(acquisitions.length);
			for (int i = 0; i < acquisitions.length; i++) {
				int index = i;
				Redlock redlock = (i % 2 == 0) ? first : second;
				threads.add(TestThreads.start(false, () -> {
					while (!stop.get()) {
						try (Lease lease = redlock.acquire("shared", TTL, Duration.ofSeconds(20))) {
							if (holders.incrementAndGet() != 1) {
								overlaps.incrementAndGet();
							}
							// the work done under the lock
							long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2);
							while (end - System.nanoTime() > 0) {
								LockSupport.parkNanos(end - System.nanoTime());
							}
							holders.decrementAndGet();
						}
						if (acquisitions[index]++ == 0) {
							everyoneHadATurn.countDown();
						}
					}
					return null;
				}));
			}
			boolean allServed = everyoneHadATurn.await(20, TimeUnit.SECONDS);
			stop.set(true);
			for (Running<Void> thread : threads) {
				thread.await(Duration.ofSeconds(30));
			}
			assertThat(allServed).as("every thread acquired within 20 s: %s", Arrays.toString(acquisitions)).isTrue();
		}
		assertThat(overlaps).hasValue(0);
	}

	@Test
	void aLockThatExpiresWithoutAReleaseIsStillTakenByPolling(RedisNodes nodes) throws Exception {
		RedlockSettings polling = TestSupport.SETTINGS.withRetryDelay(Duration.ofMillis(100));
		try (Redlock holder = TestSupport.redlock(nodes, polling);
				Redlock waiter = TestSupport.redlock(nodes, polling)) {
			// never released: its key expires, which announces nothing
			holder.acquire("abandoned", Duration.ofMillis(500), Duration.ZERO);
			Running<Lease> waiting = startWaiting(waiter, "abandoned", Duration.ofSeconds(5));
			waiting.await(Duration.ofSeconds(10)).release();
		}
	}

	@Test
	void aDroppedSubscriptionFallsBackToPollingAndSubscribesAgain(RedisNodes nodes) throws Exception {
		RedlockSettings polling = TestSupport.SETTINGS.withRetryDelay(Duration.ofMillis(200));
		try (Redlock holder = TestSupport.redlock(nodes, polling);
				Redlock waiter = TestSupport.redlock(nodes, polling)) {
			Lease held = holder.acquire("dropped", TTL, Duration.ZERO);
			Running<Lease> waiting = startWaiting(waiter, "dropped", Duration.ofSeconds(10));
			TestSupport.awaitSubscribed(nodes, "dropped", 1);
			for (RedisNode node : nodes.nodes()) {
				node.command("CLIENT", "KILL", "TYPE", "pubsub");
			}
			held.release();
			waiting.await(Duration.ofSeconds(15)).release();
			// and the subscriptions come back for the next waiter
			Lease again = holder.acquire("dropped", TTL, Duration.ZERO);
			Running<Lease> next = startWaiting(waiter, "dropped", Duration.ofSeconds(10));
			TestSupport.awaitSubscribed(nodes, "dropped", 1);
			again.release();
			next.await(Duration.ofSeconds(15)).release();
		}
	}

	@Test
	void aWaiterHearsOfTheReleaseWithOneNodeDown(RedisNodes nodes) throws Exception {
		try (Redlock holder = TestSupport.redlock(nodes, NO_POLLING);
				Redlock waiter = TestSupport.redlock(nodes, NO_POLLING)) {
			HeldAndAwaited handed = holdWithAWaiterElsewhere(nodes, holder, waiter, "minority-down");
			nodes.node(0).kill();
			handed.handOver();
		}
	}

	@Test
	void closingWakesTheWaitersAtOnce(RedisNodes nodes) throws Exception {
		Redlock redlock = TestSupport.redlock(nodes, NO_POLLING);
		HeldAndAwaited closing = holdWithAWaiter(redlock, "closing");
		redlock.close();
		assertThatExceptionOfType(Exception.class).isThrownBy(() -> closing.waiting().await(WELL_BEFORE_A_POLL))
			.havingRootCause()
			.isInstanceOf(IllegalStateException.class)
			.withMessageContaining("closed");
		assertThat(closing.held().isLost()).isTrue();
	}

	@ParameterizedTest(name = "virtual thread: {0}")
	@MethodSource("dev.redlock.core.TestThreads#kinds")
	void anInterruptedWaiterLeavesTheQueueAndTheNextOneGetsTheLock(boolean virtual, RedisNodes nodes) throws Exception {
		try (Redlock redlock = TestSupport.redlock(nodes, NO_POLLING)) {
			Lease held = redlock.acquire("interrupted", TTL, Duration.ZERO);
			Running<Boolean> first = TestThreads.start(virtual, () -> {
				try {
					redlock.acquire("interrupted", TTL, Duration.ofSeconds(30)).release();
					return false;
				}
				catch (LockNotAcquiredException ex) {
					return ex.reason() == LockNotAcquiredException.Reason.INTERRUPTED
							&& Thread.currentThread().isInterrupted();
				}
			});
			awaitWaitingThreads(redlock, 1);
			Running<Lease> second = TestThreads.start(virtual,
					() -> redlock.acquire("interrupted", TTL, Duration.ofSeconds(30)));
			awaitWaitingThreads(redlock, 2);
			first.thread().interrupt();
			assertThat(first.await(WELL_BEFORE_A_POLL)).as("interrupted, with its flag set").isTrue();
			handOver(held, second);
		}
	}

	@Test
	void aWaiterThatRunsOutOfTimeInTheQueueSaysSo(RedisNodes nodes) throws Exception {
		try (Redlock redlock = TestSupport.redlock(nodes, NO_POLLING)) {
			HeldAndAwaited queued = holdWithAWaiter(redlock, "queued");
			assertThatExceptionOfType(LockNotAcquiredException.class)
				.isThrownBy(() -> redlock.acquire("queued", TTL, Duration.ofMillis(300)))
				.satisfies((ex) -> assertThat(ex.reason()).isEqualTo(LockNotAcquiredException.Reason.CONTENDED));
			assertThat(redlock.waitingThreads()).isOne();
			queued.handOver();
		}
	}

	/** Starts a platform thread that waits up to the wait time for the resource. */
	private static Running<Lease> startWaiting(Redlock redlock, String resource, Duration waitTime) {
		return TestThreads.start(false, () -> redlock.acquire(resource, TTL, waitTime));
	}

	/**
	 * Acquires the resource, then starts the first thread of the same instance to wait
	 * for it, and returns once it waits.
	 */
	private static HeldAndAwaited holdWithAWaiter(Redlock redlock, String resource) {
		Lease held = redlock.acquire(resource, TTL, Duration.ZERO);
		Running<Lease> waiting = startWaiting(redlock, resource, Duration.ofSeconds(30));
		awaitWaitingThreads(redlock, 1);
		return new HeldAndAwaited(held, waiting);
	}

	/**
	 * Acquires the resource through the holder, then starts a thread of the waiter's
	 * instance to wait for it, and returns once every node counts its subscription.
	 */
	private static HeldAndAwaited holdWithAWaiterElsewhere(RedisNodes nodes, Redlock holder, Redlock waiter,
			String resource) {
		Lease held = holder.acquire(resource, TTL, Duration.ZERO);
		Running<Lease> waiting = startWaiting(waiter, resource, Duration.ofSeconds(30));
		TestSupport.awaitSubscribed(nodes, resource, 1);
		return new HeldAndAwaited(held, waiting);
	}

	/** Waits until the given number of this instance's threads wait for a lock. */
	private static void awaitWaitingThreads(Redlock redlock, int threads) {
		TestSupport.awaitTrue(threads + " thread(s) wait", Duration.ofSeconds(5),
				() -> redlock.waitingThreads() == threads);
	}

	/**
	 * Releases the held lease and asserts that the waiter takes the lock well before it
	 * would have polled.
	 */
	private static void handOver(Lease held, Running<Lease> waiting) throws Exception {
		held.release();
		waiting.await(WELL_BEFORE_A_POLL).release();
	}

	/** A held lease and a thread waiting for its lock. */
	private record HeldAndAwaited(Lease held, Running<Lease> waiting) {

		/** See {@link WaitingTests#handOver(Lease, Running)}. */
		void handOver() throws Exception {
			WaitingTests.handOver(this.held, this.waiting);
		}

	}

}
