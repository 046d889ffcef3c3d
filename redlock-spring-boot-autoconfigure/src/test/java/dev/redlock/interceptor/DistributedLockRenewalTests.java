package dev.redlock.interceptor;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import dev.redlock.NodeKeys;
import dev.redlock.annotation.DistributedLock;
import dev.redlock.annotation.OnLeaseLost;
import dev.redlock.annotation.Renewal;
import dev.redlock.core.Lease;
import dev.redlock.core.LeaseLostException;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.Redlock;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Renewal, the lease-lost signal, {@link LockContext} and every exception path of
 * {@code @DistributedLock}, on three real Redis nodes. Leases that are outrun have a TTL
 * of 1 s: short for a test to wait out, long enough to be taken with validity left on a
 * loaded machine. Renewed leases have a TTL of 3 s: a renewal is due after a third of it,
 * and the two thirds left must hold a round of up to a node timeout (1 s here) and a
 * renewal thread that a loaded machine runs late.
 */
@SpringBootTest(properties = { "redlock.default-wait-time=0s", "jobs.max-hold=4s" })
@WithRedisNodes(count = 3)
class DistributedLockRenewalTests {

	/** The TTL of the leases that are outrun. */
	private static final Duration TTL = Duration.ofSeconds(1);

	/** The TTL of the renewed leases. */
	private static final Duration RENEWED_TTL = Duration.ofSeconds(3);

	/**
	 * The {@code jobs.max-hold} of {@link JobService#bounded(String)}: beyond the TTL, so
	 * that a lease that is not renewed at all runs out before it.
	 */
	private static final Duration MAX_HOLD = Duration.ofSeconds(4);

	@Autowired
	private JobService jobs;

	@Autowired
	private RedisNodes nodes;

	@Autowired
	private Redlock redlock;

	@Autowired
	private MeterRegistry meters;

	@BeforeEach
	void clean() {
		this.jobs.calls().set(0);
	}

	@Test
	void renewedMethodKeepsTheLockForTwoTtlsAndReleasesAtTheEnd() throws Exception {
		AtomicBoolean running = new AtomicBoolean();
		CompletableFuture<Lease> job = CompletableFuture.supplyAsync(() -> this.jobs.renewed("a", running));
		NodeKeys.awaitTrue("the job started", () -> running.get());
		int refused = Contention.refusalsWhile(running, () -> this.jobs.contender("a"),
				() -> LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)));
		Lease lease = job.get(30, TimeUnit.SECONDS);
		assertThat(lease.heldFor()).isGreaterThanOrEqualTo(RENEWED_TTL.multipliedBy(2));
		// one every third of the TTL: 6 in two TTLs, 4 if they ran two thirds of a TTL
		// late in all; fewer than 2 could not have kept it
		assertThat(lease.extensionAttempts()).isGreaterThanOrEqualTo(4);
		assertThat(lease.isReleased()).isTrue();
		assertThat(lease.isAutoRenewing()).isFalse();
		assertThat(lease.isLost()).isFalse();
		assertThat(refused).isGreaterThan(20);
		awaitNothingOnTheNodes();
		assertThat(lost("renewed")).isZero();
		// the lock is free again: the second caller now gets it
		int before = this.jobs.calls().get();
		this.jobs.contender("a");
		assertThat(this.jobs.calls()).hasValue(before + 1);
		System.out.printf(
				"[renewal] @DistributedLock(ttl = 3s, autoRenew = ON): held %d ms, %d renewals, "
						+ "%d callers refused meanwhile%n",
				lease.heldFor().toMillis(), lease.extensionAttempts(), refused);
	}

	@Test
	void methodThatOutrunsItsLeaseThrowsLeaseLostAfterItRan() {
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(() -> this.jobs.outrun("b")).satisfies((ex) -> {
			assertThat(ex.getMessage())
				.contains("Lock 'outrun' on 'outrun:b' was lost before JobService.outrun(String) returned")
				.contains("it ran longer than its lease")
				.contains("TTL 1000 ms");
			assertThat(ex.lockName()).isEqualTo("outrun");
			// the method returned once the key had expired on every node, so it outran
			// its lease's validity: the TTL less the drift allowed for clocks. Not the
			// whole TTL: a node expires the key by its own clock, which ran up to 2 ms
			// short of this JVM's 1 s on a loaded machine (held 998 ms)
			assertThat(ex.heldFor()).isGreaterThan(TTL.minus(this.redlock.settings().driftFor(TTL)));
			assertThat(ex.ttl()).isEqualTo(TTL);
		});
		assertThat(this.jobs.calls()).hasValue(1);
		awaitNothingOnTheNodes();
		assertThat(lost("outrun")).isEqualTo(1);
	}

	@Test
	void methodExceptionWinsAndCarriesTheLossAsSuppressed() {
		assertThatIllegalStateException().isThrownBy(() -> this.jobs.outrunAndFail("c"))
			.withMessage("the method's own failure")
			.satisfies((ex) -> assertThat(ex.getSuppressed()).singleElement().isInstanceOf(LeaseLostException.class));
		assertThat(lost("outrunAndFail")).isEqualTo(1);
	}

	@Test
	void lostLeaseIsLoggedAndCountedButTheResultReturnedByDefault() {
		assertThat(this.jobs.outrunQuietly("d")).isEqualTo("done");
		assertThat(lost("outrunQuietly")).isEqualTo(1);
	}

	@Test
	void renewalStopsAtMaxHoldFromAPlaceholder() {
		long start = System.nanoTime();
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(() -> this.jobs.bounded("e"));
		Duration ran = Duration.ofNanos(System.nanoTime() - start);
		// renewed until max-hold, then the last extension runs out at most one TTL later;
		// 1 s more for a loaded machine. A lease renewed past max-hold would keep the
		// method waiting until it gives up (20 s)
		assertThat(ran).isGreaterThanOrEqualTo(MAX_HOLD);
		assertThat(ran).isLessThan(MAX_HOLD.plus(RENEWED_TTL).plusSeconds(1));
		assertThat(lost("bounded")).isEqualTo(1);
	}

	@Test
	void lockContextGivesTheLeaseInsideTheMethodOnly() {
		assertThat(LockContext.currentLease()).isEmpty();
		Lease inside = this.jobs.context("f");
		assertThat(inside.resource()).isEqualTo("context:f");
		assertThat(inside.isReleased()).isTrue();
		assertThat(LockContext.currentLease()).isEmpty();
	}

	@Test
	void outOfMemoryErrorFromTheMethodReleasesAndPropagates() {
		assertThatExceptionOfType(OutOfMemoryError.class).isThrownBy(() -> this.jobs.outOfMemory("g"))
			.withMessage("test");
		assertThat(this.jobs.calls()).hasValue(1);
		awaitNothingOnTheNodes();
		assertThat(LockContext.currentLease()).isEmpty();
	}

	@Test
	void interruptedCallerIsRefusedAndLeavesNothingBehind() {
		Thread.currentThread().interrupt();
		try {
			assertThatExceptionOfType(LockNotAcquiredException.class).isThrownBy(() -> this.jobs.contender("h"))
				.satisfies((ex) -> assertThat(ex.reason()).isEqualTo(LockNotAcquiredException.Reason.INTERRUPTED));
			assertThat(Thread.currentThread().isInterrupted()).isTrue();
		}
		finally {
			Thread.interrupted();
		}
		assertThat(this.jobs.calls()).hasValue(0);
		awaitNothingOnTheNodes();
	}

	@Test
	void methodInterruptedWhileHoldingTheLockStillReleasesIt() {
		try {
			this.jobs.interruptsItself("i");
			assertThat(Thread.currentThread().isInterrupted()).isTrue();
		}
		finally {
			Thread.interrupted();
		}
		assertThat(this.jobs.calls()).hasValue(1);
		awaitNothingOnTheNodes();
	}

	/**
	 * Waits until no node holds a key: a release returns once a quorum has deleted the
	 * key, and the last node deletes it a moment later.
	 */
	private void awaitNothingOnTheNodes() {
		NodeKeys.awaitTrue("no key left on any node", () -> NodeKeys.count(this.nodes) == 0);
	}

	private double lost(String lock) {
		return this.meters.find("redlock.lease.lost")
			.tag("lock", lock)
			.counters()
			.stream()
			.mapToDouble((counter) -> counter.count())
			.sum();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(JobService.class)
	static class TestApplication {

	}

	static class JobService {

		private final AtomicInteger calls = new AtomicInteger();

		private final RedisNodes nodes;

		JobService(RedisNodes nodes) {
			this.nodes = nodes;
		}

		@DistributedLock(name = "renewed", key = "'job:' + #id", ttl = "3s", autoRenew = Renewal.ON)
		public Lease renewed(String id, AtomicBoolean running) {
			return ValidLease.heldFor(RENEWED_TTL.multipliedBy(2), running);
		}

		@DistributedLock(name = "contender", key = "'job:' + #id", ttl = "3s")
		public void contender(String id) {
			this.calls.incrementAndGet();
		}

		@DistributedLock(name = "outrun", key = "'outrun:' + #id", ttl = "1s", onLeaseLost = OnLeaseLost.THROW)
		public String outrun(String id) {
			this.calls.incrementAndGet();
			NodeKeys.awaitReleased(this.nodes, "redlock:outrun:" + id);
			return "done";
		}

		@DistributedLock(name = "outrunAndFail", key = "'failing:' + #id", ttl = "1s", onLeaseLost = OnLeaseLost.THROW)
		public String outrunAndFail(String id) {
			NodeKeys.awaitReleased(this.nodes, "redlock:failing:" + id);
			throw new IllegalStateException("the method's own failure");
		}

		@DistributedLock(name = "outrunQuietly", key = "'quiet:' + #id", ttl = "1s")
		public String outrunQuietly(String id) {
			NodeKeys.awaitReleased(this.nodes, "redlock:quiet:" + id);
			return "done";
		}

		@DistributedLock(name = "bounded", key = "'bounded:' + #id", ttl = "3s", autoRenew = Renewal.ON,
				maxHold = "${jobs.max-hold}", onLeaseLost = OnLeaseLost.THROW)
		public void bounded(String id) {
			NodeKeys.awaitTrue("the lease ran out", Duration.ofSeconds(20),
					() -> NodeKeys.holding(this.nodes, "redlock:bounded:" + id) == 0);
		}

		@DistributedLock(key = "'context:' + #id", ttl = "10s")
		public Lease context(String id) {
			Lease lease = LockContext.currentLease().orElseThrow();
			// the lease works from any thread, though the context is this thread's
			Boolean validElsewhere = CompletableFuture.supplyAsync(lease::isValid).join();
			Boolean contextElsewhere = CompletableFuture.supplyAsync(() -> LockContext.currentLease().isPresent())
				.join();
			if (!validElsewhere || contextElsewhere || !lease.isValid()) {
				throw new IllegalStateException(
						"valid elsewhere: " + validElsewhere + ", context elsewhere: " + contextElsewhere);
			}
			return lease;
		}

		@DistributedLock(key = "'oom:' + #id", ttl = "10s")
		public void outOfMemory(String id) {
			this.calls.incrementAndGet();
			throw new OutOfMemoryError("test");
		}

		@DistributedLock(key = "'interrupted:' + #id", ttl = "10s")
		public void interruptsItself(String id) {
			this.calls.incrementAndGet();
			Thread.currentThread().interrupt();
		}

		public AtomicInteger calls() {
			return this.calls;
		}

	}

}
