package dev.redlock.interceptor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.task.AsyncTaskExecutor;

import dev.redlock.NodeKeys;
import dev.redlock.annotation.DistributedLock;
import dev.redlock.annotation.Renewal;
import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.Redlock;
import dev.redlock.core.ReleaseOutcome;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @DistributedLock} and leases on virtual threads, in an application with
 * {@code spring.threads.virtual.enabled=true} (so Boot's {@code applicationTaskExecutor}
 * runs each task on a new virtual thread), on three real Redis nodes: mutual exclusion
 * among many virtual threads, renewal while the holder's virtual thread is parked, and
 * interrupts.
 */
@SpringBootTest(properties = { "spring.threads.virtual.enabled=true", "redlock.default-wait-time=0s" })
@WithRedisNodes(count = 3)
@EnabledForJreRange(min = JRE.JAVA_21)
class VirtualThreadLockTests {

	/**
	 * The TTL of renewed leases: a renewal is due after a third of it, and the two thirds
	 * left must hold a round of up to a node timeout (1 s in these tests) and a renewal
	 * thread that a loaded machine runs late.
	 */
	private static final Duration SHORT_TTL = Duration.ofSeconds(3);

	/** How many TTLs the renewed leases are held for. */
	private static final int TTLS_HELD = 2;

	@Autowired
	private Counter counter;

	@Autowired
	private Jobs jobs;

	@Autowired
	private Redlock redlock;

	@Autowired
	private RedisNodes nodes;

	@Autowired
	@Qualifier("applicationTaskExecutor")
	private AsyncTaskExecutor executor;

	@BeforeEach
	void clean() {
		this.counter.reset();
		this.jobs.calls().set(0);
	}

	@Test
	void oneKeyCalledFromAHundredVirtualThreadsAtOnceRunsOneCallAtATimeAndEveryCallReturns() throws Exception {
		int calls = 100;
		CountDownLatch start = new CountDownLatch(1);
		List<Future<Boolean>> onVirtualThread = new ArrayList<>();
		for (int i = 0; i < calls; i++) {
			onVirtualThread.add(this.executor.submit(() -> {
				start.await();
				this.counter.increment("shared");
				return VirtualThreads.isVirtual(Thread.currentThread());
			}));
		}
		long tookMillis = VirtualThreads.openAndAwait(start, onVirtualThread, Duration.ofSeconds(60),
				"ran on a virtual thread of Boot's executor");
		assertThat(this.counter.value()).as("no update lost").isEqualTo(calls);
		assertThat(this.counter.maxInside()).as("most calls in the locked method at once").isEqualTo(1);
		NodeKeys.awaitReleased(this.nodes, "redlock:counter:shared");
		System.out.printf("[virtual threads] %d calls of one key from %d virtual threads: %d ms, max %d inside%n",
				calls, calls, tookMillis, this.counter.maxInside());
	}

	@Test
	void aRenewedMethodOnAVirtualThreadKeepsItsLeaseForTwoTtlsAndReleasesIt() throws Exception {
		AtomicBoolean running = new AtomicBoolean();
		AtomicBoolean lost = new AtomicBoolean();
		Future<Lease> job = this.executor.submit(() -> this.jobs.renewed("b", running, lost));
		NodeKeys.awaitTrue("the job started", running::get);
		// the next try once the job has ended, or 20 ms from now
		int refused = Contention.refusalsWhile(running, () -> this.jobs.contender("b"),
				() -> awaitQuietly(job, Duration.ofMillis(20)));
		Lease lease = job.get(30, TimeUnit.SECONDS);
		assertThat(lease.heldFor()).isGreaterThanOrEqualTo(SHORT_TTL.multipliedBy(TTLS_HELD));
		// one every third of the TTL: 6 in two TTLs, 4 if they ran two thirds of a TTL
		// late in all; fewer than 2 could not have kept it
		assertThat(lease.extensionAttempts()).isGreaterThanOrEqualTo(4);
		assertThat(lease.isReleased()).isTrue();
		assertThat(lease.isLost()).isFalse();
		assertThat(lost).as("onLost ran").isFalse();
		assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
		assertThat(refused).isGreaterThan(10);
		NodeKeys.awaitReleased(this.nodes, "redlock:renewed:b");
	}

	@Test
	void leasesRenewedWhileTheirVirtualThreadsSleepStayValidAndAreReleased() throws Exception {
		int holders = 20;
		ExecutorService virtualThreads = VirtualThreads.newExecutor("holder-");
		AtomicInteger lost = new AtomicInteger();
		List<Future<Lease>> held = new ArrayList<>();
		try {
			for (int i = 0; i < holders; i++) {
				String resource = "held:" + i;
				held.add(virtualThreads.submit(() -> {
					try (Lease lease = this.redlock.acquire(resource, SHORT_TTL, Duration.ofSeconds(5)).autoRenew()) {
						CountDownLatch lossSignal = new CountDownLatch(1);
						lease.onLost(() -> {
							lost.incrementAndGet();
							lossSignal.countDown();
						});
						long end = System.nanoTime() + SHORT_TTL.multipliedBy(TTLS_HELD).toNanos();
						while (System.nanoTime() - end < 0) {
							if (!lease.isValid() || NodeKeys.holding(this.nodes, lease.redisKey()) < 2) {
								throw new IllegalStateException("not held while renewed: " + lease);
							}
							// parks the virtual thread until the lease is lost or 200 ms
							// have passed: the renewal does not need it. Not more often:
							// each look at the nodes opens a connection to each of them
							if (lossSignal.await(200, TimeUnit.MILLISECONDS)) {
								throw new IllegalStateException("lost while renewed: " + lease);
							}
						}
						return lease;
					}
				}));
			}
			for (Future<Lease> future : held) {
				Lease lease = future.get(30, TimeUnit.SECONDS);
				assertThat(lease.heldFor()).isGreaterThanOrEqualTo(SHORT_TTL.multipliedBy(TTLS_HELD));
				assertThat(lease.isReleased()).isTrue();
				assertThat(lease.isLost()).isFalse();
				assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
				NodeKeys.awaitReleased(this.nodes, lease.redisKey());
			}
		}
		finally {
			virtualThreads.shutdownNow();
		}
		assertThat(lost).hasValue(0);
	}

	@Test
	void aVirtualThreadInterruptedInsideTheMethodStillReleasesTheLockAndKeepsItsInterrupt() throws Exception {
		// on a virtual thread, a socket read that has to wait while the interrupt flag is
		// set fails (the JDK closes the
		// socket): a release on such a thread must not depend on it, every time, so the
		// call is made 20 times
		int calls = 20;
		Map<ReleaseOutcome, Integer> outcomes = new EnumMap<>(ReleaseOutcome.class);
		List<String> wrong = new ArrayList<>();
		for (int i = 0; i < calls; i++) {
			String id = "c" + i;
			InterruptedCall call = VirtualThreads.call("interrupted-", () -> {
				Lease lease = this.jobs.interruptsItself(id);
				return new InterruptedCall(lease, Thread.currentThread().isInterrupted(),
						VirtualThreads.isVirtual(Thread.currentThread()));
			});
			int holding = NodeKeys.holding(this.nodes, "redlock:interrupted:" + id);
			outcomes.merge(call.lease().release(), 1, Integer::sum);
			if (!call.interruptFlag() || !call.virtual() || holding > 1 || call.lease().isLost()) {
				wrong.add(id + ": interrupt flag " + call.interruptFlag() + ", virtual " + call.virtual()
						+ ", nodes holding the key right after the call " + holding + ", lost "
						+ call.lease().isLost());
			}
		}
		assertThat(this.jobs.calls()).as("the method ran every time").hasValue(calls);
		assertThat(wrong).as("calls that kept no interrupt, or left the key on a quorum").isEmpty();
		NodeKeys.awaitTrue("every key gone from every node", () -> NodeKeys.count(this.nodes) == 0);
		// the lock client still works for the next caller
		this.jobs.free("c0");
		assertThat(this.jobs.calls()).hasValue(calls + 1);
		assertThat(outcomes).as("what the releases from interrupted virtual threads found")
			.containsExactly(Map.entry(ReleaseOutcome.RELEASED, calls));
	}

	@Test
	void anInterruptedVirtualThreadIsRefusedAndLeavesNothingBehind() throws Exception {
		String refusal = VirtualThreads.call("refused-", () -> {
			Thread.currentThread().interrupt();
			try {
				this.jobs.free("d");
				return "ran";
			}
			catch (LockNotAcquiredException ex) {
				return ex.reason() + ", interrupted: " + Thread.currentThread().isInterrupted();
			}
		});
		assertThat(refusal).isEqualTo("INTERRUPTED, interrupted: true");
		assertThat(this.jobs.calls()).hasValue(0);
		NodeKeys.awaitReleased(this.nodes, "redlock:interrupted:d");
	}

	@Test
	void aVirtualThreadInterruptedWhileWaitingForTheLockGivesUpAtOnce() throws Exception {
		try (Lease held = this.redlock.acquire("interrupted:e", Duration.ofSeconds(30), Duration.ZERO)) {
			CompletableFuture<String> waiting = new CompletableFuture<>();
			Thread waiter = VirtualThreads.factory("waiter-").newThread(() -> {
				try {
					this.jobs.patient("e");
					waiting.complete("ran");
				}
				catch (LockNotAcquiredException ex) {
					waiting.complete(ex.reason() + ", interrupted: " + Thread.currentThread().isInterrupted());
				}
				catch (RuntimeException | Error ex) {
					waiting.completeExceptionally(ex);
				}
			});
			waiter.start();
			// parked between two attempts, or in one: it waits for the lock
			NodeKeys.awaitTrue("the waiter waits for the lock",
					() -> waiter.getState() == Thread.State.WAITING || waiter.getState() == Thread.State.TIMED_WAITING);
			assertThat(waiting).as("still waiting for the lock").isNotDone();
			long interruptedAt = System.nanoTime();
			waiter.interrupt();
			assertThat(waiting.get(5, TimeUnit.SECONDS)).isEqualTo("INTERRUPTED, interrupted: true");
			assertThat(Duration.ofNanos(System.nanoTime() - interruptedAt)).isLessThan(Duration.ofSeconds(1));
			assertThat(this.jobs.calls()).hasValue(0);
			assertThat(held.isValid()).isTrue();
			// a quorum: the round returned once two nodes had granted it
			assertThat(NodeKeys.holding(this.nodes, held.redisKey())).isGreaterThanOrEqualTo(2);
		}
		NodeKeys.awaitReleased(this.nodes, "redlock:interrupted:e");
	}

	/** What an interrupted virtual thread saw after its call. */
	record InterruptedCall(Lease lease, boolean interruptFlag, boolean virtual) {
	}

	/**
	 * Waits for the future to end, at most for the given time; its outcome is read later.
	 */
	private static void awaitQuietly(Future<?> future, Duration atMost) throws InterruptedException {
		try {
			future.get(atMost.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (ExecutionException | TimeoutException ex) {
			// ended with a failure (reported by the caller's get) or still running
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import({ Counter.class, Jobs.class })
	static class TestApplication {

	}

	/** The shared critical section behind a lock. */
	static class Counter {

		private final CriticalSection section = new CriticalSection();

		@DistributedLock(key = "'counter:' + #id", ttl = "10s", waitTime = "60s")
		public void increment(String id) {
			this.section.enter();
		}

		int value() {
			return this.section.count();
		}

		int maxInside() {
			return this.section.maxInside();
		}

		void reset() {
			this.section.reset();
		}

	}

	static class Jobs {

		private final AtomicInteger calls = new AtomicInteger();

		@DistributedLock(key = "'renewed:' + #id", ttl = "3s", autoRenew = Renewal.ON)
		public Lease renewed(String id, AtomicBoolean running, AtomicBoolean lost) throws InterruptedException {
			Lease lease = LockContext.currentLease().orElseThrow();
			CountDownLatch lossSignal = new CountDownLatch(1);
			lease.onLost(() -> {
				lost.set(true);
				lossSignal.countDown();
			});
			if (!VirtualThreads.isVirtual(Thread.currentThread())) {
				throw new IllegalStateException("not on a virtual thread: " + Thread.currentThread());
			}
			running.set(true);
			try {
				long end = System.nanoTime() + SHORT_TTL.multipliedBy(TTLS_HELD).toNanos();
				while (System.nanoTime() - end < 0) {
					if (!lease.isValid() || lossSignal.await(10, TimeUnit.MILLISECONDS)) {
						throw new IllegalStateException("lease not valid while renewed: " + lease);
					}
				}
				return lease;
			}
			finally {
				running.set(false);
			}
		}

		@DistributedLock(key = "'renewed:' + #id", ttl = "3s")
		public void contender(String id) {
			this.calls.incrementAndGet();
		}

		@DistributedLock(key = "'interrupted:' + #id", ttl = "30s")
		public Lease interruptsItself(String id) {
			this.calls.incrementAndGet();
			Thread.currentThread().interrupt();
			return LockContext.currentLease().orElseThrow();
		}

		@DistributedLock(key = "'interrupted:' + #id", ttl = "30s")
		public void free(String id) {
			this.calls.incrementAndGet();
		}

		@DistributedLock(key = "'interrupted:' + #id", ttl = "30s", waitTime = "30s")
		public void patient(String id) {
			this.calls.incrementAndGet();
		}

		AtomicInteger calls() {
			return this.calls;
		}

	}

}
