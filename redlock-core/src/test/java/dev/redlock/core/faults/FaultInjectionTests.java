package dev.redlock.core.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;

import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.LockRequest;
import dev.redlock.core.LossReason;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockSettings;
import dev.redlock.core.ReleaseOutcome;
import dev.redlock.core.WarmPools;
import dev.redlock.core.faults.ExclusionHarness.CriticalSection;
import dev.redlock.core.faults.ExclusionHarness.Fault;
import dev.redlock.core.faults.ExclusionHarness.Interval;
import dev.redlock.core.faults.ExclusionHarness.PhaseStats;
import dev.redlock.core.faults.ExclusionHarness.Report;
import dev.redlock.core.faults.ExclusionHarness.Until;
import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static dev.redlock.core.LockNotAcquiredException.Reason.CONTENDED;
import static dev.redlock.core.LockNotAcquiredException.Reason.NO_QUORUM;
import static dev.redlock.core.LockNotAcquiredException.Reason.VALIDITY_EXHAUSTED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Mutual exclusion holds, and every call stays within its bound, while real nodes are
 * killed, frozen, write-paused, slowed down or restarted empty under contention from 8
 * threads over 2 {@link Redlock} instances; a holder that pauses past its TTL is the one
 * failure mode, reported as such; a renewed lease keeps the lock as long as it is
 * renewed. Each scenario prints one figure line
 * ({@code scenario …: acquisitions=… violations=… p99Attempt=…}).
 */
@WithRedisNodes(count = 5)
class FaultInjectionTests {

	private static final Duration NODE_TIMEOUT = Duration.ofMillis(100);

	private static final Duration TTL = Duration.ofSeconds(1);

	/**
	 * Room for scheduling on a small, shared machine; far below what a hang would cost.
	 */
	private static final Duration MARGIN = Duration.ofMillis(300);

	/**
	 * Room for a loaded 2-core machine, where a thread can wait a few hundred
	 * milliseconds for a CPU; still far below what a hang would cost.
	 */
	private static final Duration LOADED_MARGIN = Duration.ofSeconds(1);

	/**
	 * The longest single attempt from the outside: the acquire round, the clean-up round
	 * after a failed one, and a second clean-up round on nodes that answered NOSCRIPT,
	 * each bounded by the node timeout. (The instances are warmed up before the first
	 * attempt: a first call's wait for the first connections is not in it.)
	 */
	private static final Duration ATTEMPT_BOUND = NODE_TIMEOUT.multipliedBy(3).plus(LOADED_MARGIN);

	/**
	 * Restart quarantine off: the kit's nodes are freshly started (scenario 5 turns it on
	 * deliberately).
	 */
	private static final RedlockSettings SETTINGS = RedlockSettings.defaults()
		.withRestartQuarantine(Duration.ZERO)
		.withNodeTimeout(NODE_TIMEOUT)
		.withRetryDelay(Duration.ofMillis(20));

	/**
	 * For what measures no node timeout (nodes healthy, killed or restarted, a holder
	 * that pauses, renewal): a healthy node's reply that waited for a CPU on a busy
	 * machine must not fail a single attempt, an extension or a release.
	 */
	private static final RedlockSettings PATIENT = SETTINGS.withNodeTimeout(Duration.ofSeconds(1));

	/**
	 * How long a client leaves a node alone after a connection attempt to it failed (4
	 * node timeouts, {@code NodeConnectionPool.reconnectBackoff}). A restart can cause
	 * one: a late reply whose read the kill broke makes the pool open a replacement in
	 * the background, which may hit the node while it is down.
	 */
	private static final Duration PATIENT_RECONNECT_BACKOFF = PATIENT.nodeTimeout().multipliedBy(4);

	/** How long to wait for what a fault left on the nodes to go. */
	private static final Duration CLEAN_UP = Duration.ofSeconds(5);

	@Test
	void killingTwoNodesKeepsExclusionAndProgressAndKillingAThirdFailsCleanlyWithinTheBound(RedisNodes nodes)
			throws Exception {
		Report report = afterAHealthyPhase("1 kill -9 two, then three", nodes)
			.phase("two killed", () -> nodes.nodes(1, 3).forEach(RedisNode::kill), Until.acquisitions(40),
					Duration.ofSeconds(2))
			.phase("three killed", () -> nodes.node(4).kill(), Until.failures(30), Duration.ofSeconds(1))
			.run();

		assertExclusiveInBoundedAttempts(report);
		assertServedInBoundedAttempts(report.phase("two killed"));
		assertRefusedForWantOfAQuorum(report.phase("three killed"));

		Duration wait = Duration.ofMillis(500);
		// the killed nodes refuse at once; the live ones get the patient node timeout, so
		// that only the three killed nodes fail however busy the machine is
		try (Redlock redlock = Redlock.builder().nodes(nodes.uris()).settings(PATIENT).build()) {
			long start = System.nanoTime();
			assertThatExceptionOfType(LockNotAcquiredException.class)
				.isThrownBy(() -> redlock.acquire(LockRequest.of(ExclusionHarness.RESOURCE, TTL).named("faults"), wait))
				.satisfies((ex) -> assertThat(ex.reason()).isEqualTo(NO_QUORUM))
				.satisfies((ex) -> assertThat(ex.failedNodes()).hasSize(3));
			Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
			assertThat(elapsed).isGreaterThanOrEqualTo(wait)
				.isLessThan(wait.plus(PATIENT.nodeTimeout().multipliedBy(2)).plus(LOADED_MARGIN));
		}

		// the killed nodes come back empty; what failed attempts left on the survivors is
		// released or expires
		nodes.nodes(1, 3, 4).forEach(RedisNode::restart);
		awaitNoLockKeys(nodes);
	}

	@Test
	void aFrozenNodeCostsEveryAttemptAtMostTheNodeTimeoutAndItsLateSetNeverMakesASecondHolder(RedisNodes nodes)
			throws Exception {
		RedisNode frozen = nodes.node(2);
		List<Long> landed = new ArrayList<>();
		Report report = afterAHealthyPhase("2 SIGSTOP one node, then SIGCONT", nodes)
			.phase("stopped", frozen::pause, Until.acquisitions(40), Duration.ofSeconds(2))
			.phase("continued", () -> {
				frozen.resume();
				// a node's Redlock marker is no lock key
				landed.add(
						Long.parseLong(frozen.command("DBSIZE")) - Long.parseLong(frozen.command("EXISTS", "{fence}")));
			}, Until.acquisitions(40), Duration.ofSeconds(2))
			.run();
		System.out.println("scenario 2: lock keys on the frozen node right after SIGCONT: " + landed);

		assertExclusiveInBoundedAttempts(report);
		assertServedInBoundedAttempts(report.phase("stopped"));
		// a SET the client gave up on may have landed after SIGCONT: it is released or
		// expires with its TTL
		assertRecovered(report.phase("continued"), nodes);
	}

	@Test
	void writesPausedOnTwoNodesThenThreeKeepAttemptsBoundedAndExclusive(RedisNodes nodes) throws Exception {
		Duration longPause = Duration.ofSeconds(30);
		Report report = afterAHealthyPhase("3 CLIENT PAUSE WRITE on two, then three", nodes).phase("two paused", () -> {
			nodes.node(0).pauseClients(longPause, true);
			nodes.node(4).pauseClients(longPause, true);
		}, Until.acquisitions(40), Duration.ofSeconds(2))
			.phase("three paused", () -> nodes.node(2).pauseClients(longPause, true), Until.failures(30),
					Duration.ofSeconds(1))
			.phase("unpaused", () -> nodes.nodes(0, 2, 4).forEach(RedisNode::unpauseClients), Until.acquisitions(30),
					Duration.ofSeconds(2))
			.run();

		assertExclusiveInBoundedAttempts(report);
		assertServedInBoundedAttempts(report.phase("two paused"));
		assertRefusedForWantOfAQuorum(report.phase("three paused"));
		assertRecovered(report.phase("unpaused"), nodes);
	}

	/**
	 * Three of five nodes, a majority, sit behind a proxy that delays each direction. No
	 * quorum can form without a slow node, so a round lasts until the slow replies are
	 * read (they arrive well within the node timeout); once the round trip exceeds
	 * {@code ttl - drift} no validity is left: the failure is {@code VALIDITY_EXHAUSTED},
	 * or {@code CONTENDED} when competing attempts split the votes, or {@code NO_QUORUM}
	 * when a round leaves out a slow node it knows to lag. No lock is ever granted then.
	 * (A slow minority delays nothing: see {@code NodeFailureTests}.)
	 */
	@Test
	void latencyBeyondTheTtlFailsEveryAttemptAndReleasesEverywhere(RedisNodes nodes) throws Exception {
		// TTL 1 s leaves ~950 ms of validity at a 30 ms round trip: room for a busy
		// machine's scheduling inside the critical section; a 1.2 s round trip leaves
		// none, however fast the machine
		Duration ttl = Duration.ofSeconds(1);
		Duration slowOneWay = Duration.ofMillis(600);
		RedlockSettings settings = PATIENT.withNodeTimeout(Duration.ofSeconds(5));
		try (LatencyProxy slow2 = LatencyProxy.to(nodes.node(2), Duration.ZERO);
				LatencyProxy slow3 = LatencyProxy.to(nodes.node(3), Duration.ZERO);
				LatencyProxy slow4 = LatencyProxy.to(nodes.node(4), Duration.ZERO)) {
			List<String> uris = List.of(nodes.node(0).uri(), nodes.node(1).uri(), slow2.uri(), slow3.uri(),
					slow4.uri());
			List<LatencyProxy> slow = List.of(slow2, slow3, slow4);
			try (Redlock alone = Redlock.builder().nodes(uris).settings(settings).build()) {
				// its connections are opened while the proxies are fast: the attempt
				// below is one round, not a greeting and a round
				WarmPools.await(alone);
				Report report = ExclusionHarness.scenario("4 latency on three nodes (ttl 1 s)", uris, settings, ttl)
					.phase("round trip 30 ms", () -> slow.forEach((proxy) -> proxy.delay(Duration.ofMillis(15))),
							Until.acquisitions(30), Duration.ofSeconds(2))
					.phase("round trip 1.2 s", () -> slow.forEach((proxy) -> proxy.delay(slowOneWay)),
							Until.failures(30), Duration.ofSeconds(2))
					.run();

				assertExclusive(report);
				assertThat(report.leasesWithoutValidity()).isZero();
				assertThat(report.phase("round trip 30 ms").acquisitions()).isPositive();
				PhaseStats tooSlow = report.phase("round trip 1.2 s");
				assertThat(tooSlow.acquisitions()).isZero();
				assertThat(tooSlow.failures(VALIDITY_EXHAUSTED)).isPositive();

				long start = System.nanoTime();
				assertThatExceptionOfType(LockNotAcquiredException.class)
					.isThrownBy(() -> alone.acquire(LockRequest.of(ExclusionHarness.RESOURCE, ttl).named("faults"),
							Duration.ZERO))
					.satisfies((ex) -> assertThat(ex.reason()).isEqualTo(VALIDITY_EXHAUSTED))
					.satisfies((ex) -> assertThat(ex.failedNodes()).isEmpty());
				assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(ttl);
			}
			// released everywhere, or expired: nothing is left on the nodes
			// themselves, around the proxies
			assertThat(keyCount(nodes)).isZero();
		}
	}

	/**
	 * A holder whose clock stands still believes its lease valid long after it expired.
	 * When it finally releases or extends, the Lua scripts compare values, so the next
	 * holder's lock is untouched on every node.
	 */
	@Test
	void aStaleHolderCanNeitherReleaseNorExtendTheNextHoldersLock(RedisNodes nodes) {
		Duration ttl = Duration.ofMillis(200);
		try (Redlock frozenClock = Redlock.builder().nodes(nodes.uris()).settings(PATIENT).ticker(() -> 0L).build();
				Redlock other = Redlock.builder().nodes(nodes.uris()).settings(PATIENT).build()) {
			Lease stale = frozenClock.acquire(LockRequest.of(ExclusionHarness.RESOURCE, ttl).named("faults"),
					Duration.ZERO);
			ExclusionHarness.awaitTrue("the stale lease expires on every node", CLEAN_UP, () -> keyCount(nodes) == 0);
			assertThat(stale.isValid()).isTrue();
			Lease next = other.acquire(LockRequest.of(ExclusionHarness.RESOURCE, TTL).named("faults"), Duration.ZERO);
			List<String> before = values(nodes);

			boolean extended = stale.extend();
			ReleaseOutcome released = stale.release();

			List<String> after = values(nodes);
			long heldByNext = after.stream().filter((value) -> value != null).count();
			long changed = 0;
			for (int i = 0; i < before.size(); i++) {
				if (!Objects.equals(before.get(i), after.get(i))) {
					changed++;
				}
			}
			System.out.printf(
					"scenario 8 stale release/extend: acquisitions=2 violations=%d p99Attempt=n/a"
							+ " failures(by reason)={} [stale extend=%s, stale release=%s, next holder on %d nodes]%n",
					changed, extended, released, heldByNext);
			assertThat(extended).isFalse();
			assertThat(released).isEqualTo(ReleaseOutcome.EXPIRED);
			assertThat(after).isEqualTo(before);
			assertThat(heldByNext).isGreaterThanOrEqualTo(3);
			assertThat(next.isValid()).isTrue();
			assertThat(next.release()).isEqualTo(ReleaseOutcome.RELEASED);
		}
	}

	/**
	 * Now and then a holder stops (a GC pause, a frozen VM) past its TTL inside the
	 * critical section. Its lease reports itself lost when it wakes up; others got in
	 * meanwhile, which the harness counts as overstays, the known failure mode, while
	 * holders within their validity never overlap. Its release deletes nothing of the
	 * next holder's. (That an {@code onLeaseLost = THROW} method then throws is tested in
	 * the Spring module, in {@code DistributedLockRenewalTests}.)
	 */
	@Test
	void aHolderPausedPastItsTtlLosesItsLeaseAndItsReleaseDeletesNothingForeign(RedisNodes nodes) throws Exception {
		// a TTL that no other holder outlives on a busy machine, and a pause half
		// a TTL past it
		Duration ttl = Duration.ofSeconds(1);
		Duration pause = ttl.plusMillis(500);
		AtomicInteger sectionsRun = new AtomicInteger();
		List<String> woke = new CopyOnWriteArrayList<>();
		CriticalSection pausing = (lease, work) -> {
			int n = sectionsRun.incrementAndGet();
			if (n % 30 == 10) {
				ExclusionHarness.pauseFor(pause);
				woke.add(lease.isLost() + "/" + lease.lossReason().map(Enum::name).orElse("-"));
			}
			else {
				CriticalSection.THINK.run(lease, work);
			}
		};
		Report report = ExclusionHarness
			.scenario("6 holder paused past its ttl (1 s) every 30th section", nodes.uris(), PATIENT, ttl)
			.section(pausing)
			.phase("pauses", Fault.NONE, Until.acquisitions(75), Duration.ofSeconds(20))
			.run();
		System.out.println("scenario 6: paused holders woke up with lost/reason " + woke);

		assertThat(woke).hasSizeGreaterThanOrEqualTo(3).allMatch("true/VALIDITY_RAN_OUT"::equals);
		assertThat(report.overstays()).as("overstays: the paused holders").isEqualTo(woke.size());
		assertThat(report.overstayOverlaps()).as("holders that got in during a pause").isPositive();
		assertThat(report.releases(ReleaseOutcome.EXPIRED)).isGreaterThanOrEqualTo(woke.size());
		assertThat(report.occupancyViolations()).as("valid holders inside at once").isZero();
		assertThat(report.registerLostUpdates()).as("register updates lost").isZero();
		assertThat(report.overlaps()).as("overlapping lease intervals").isZero();
		assertThat(report.leasesWithoutValidity()).isZero();
		assertThat(report.violations()).isZero();

		// the pause again, alone: its release leaves the next holder's lock as it was
		try (Redlock paused = Redlock.builder().nodes(nodes.uris()).settings(PATIENT).build();
				Redlock other = Redlock.builder().nodes(nodes.uris()).settings(PATIENT).build()) {
			Lease stale = paused.acquire(LockRequest.of(ExclusionHarness.RESOURCE, ttl).named("faults"), Duration.ZERO);
			ExclusionHarness.pauseFor(pause);
			assertThat(stale.isLost()).isTrue();
			assertThat(stale.lossReason()).contains(LossReason.VALIDITY_RAN_OUT);
			ExclusionHarness.awaitTrue("the stale lock expired on every node", CLEAN_UP, () -> keyCount(nodes) == 0);
			Lease next = other.acquire(LockRequest.of(ExclusionHarness.RESOURCE, TTL).named("faults"), Duration.ZERO);
			List<String> before = values(nodes);

			ReleaseOutcome released = stale.release();

			List<String> after = values(nodes);
			long heldByNext = after.stream().filter(Objects::nonNull).count();
			System.out.printf("scenario 6: stale release=%s, next holder still on %d nodes, unchanged=%s%n", released,
					heldByNext, after.equals(before));
			assertThat(released).isEqualTo(ReleaseOutcome.EXPIRED);
			assertThat(after).isEqualTo(before);
			assertThat(heldByNext).isGreaterThanOrEqualTo(3);
			assertThat(next.release()).isEqualTo(ReleaseOutcome.RELEASED);
		}
	}

	/**
	 * A holder with automatic renewal keeps the lock for three times its TTL while seven
	 * threads keep trying; none gets in. The harness takes each lease's validity as
	 * renewed. Renewal then stops at release (the key is gone within a renewal interval
	 * and stays gone) and at {@code maxHold} (the key expires without a release). The TTL
	 * is 1 s: a renewal is due a third of it after the last one, which leaves more than
	 * half a second for the renewal thread to get a CPU on a busy machine.
	 */
	@Test
	void autoRenewalHoldsForThreeTtlsAndStopsAtReleaseAndAtMaxHold(RedisNodes nodes) throws Exception {
		Duration ttl = Duration.ofSeconds(1);
		Duration hold = ttl.multipliedBy(3);
		AtomicBoolean firstSection = new AtomicBoolean(true);
		AtomicReference<Lease> longLease = new AtomicReference<>();
		AtomicLong holdStart = new AtomicLong();
		AtomicLong holdEnd = new AtomicLong();
		AtomicInteger invalidSeen = new AtomicInteger();
		CriticalSection holding = (lease, work) -> {
			if (!firstSection.compareAndSet(true, false)) {
				CriticalSection.THINK.run(lease, work);
				return;
			}
			longLease.set(lease);
			long start = System.nanoTime();
			holdStart.set(start);
			while (System.nanoTime() - (start + hold.toNanos()) < 0) {
				if (!lease.isValid()) {
					invalidSeen.incrementAndGet();
				}
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
			}
			holdEnd.set(System.nanoTime());
		};
		Report report = ExclusionHarness
			.scenario("7 auto-renewal: one hold of 3 s with ttl 1 s", nodes.uris(), PATIENT, ttl)
			.acquirer((redlock, resource,
					t) -> redlock.acquire(LockRequest.of(resource, t).named("faults"), Duration.ZERO).autoRenew())
			.section(holding)
			.phase("renewed hold", Fault.NONE, Until.acquisitions(40), Duration.ofSeconds(10))
			.run();

		Lease held = longLease.get();
		long inDuringHold = report.intervals()
			.stream()
			.filter((interval) -> interval.start() - holdStart.get() > 0 && interval.start() - holdEnd.get() < 0)
			.count();
		System.out.printf(
				"scenario 7: held %d ms with ttl %d ms, %d extensions, lost=%s; acquisitions by others"
						+ " during the hold=%d, their failed attempts=%d%n",
				held.heldFor().toMillis(), ttl.toMillis(), held.extensionAttempts(), held.isLost(), inDuringHold,
				report.phase("renewed hold").failureCount());
		assertExclusive(report);
		assertThat(inDuringHold).as("acquisitions by others during the renewed hold").isZero();
		assertThat(invalidSeen).as("times the renewed lease was seen invalid").hasValue(0);
		assertThat(held.isLost()).isFalse();
		// valid throughout: renewed at least once per TTL
		assertThat(held.extensionAttempts()).isGreaterThanOrEqualTo((int) (hold.toNanos() / ttl.toNanos()) - 1);
		assertThat(Duration.ofNanos(holdEnd.get() - holdStart.get())).isGreaterThanOrEqualTo(hold);
		assertThat(report.phase("renewed hold").failures(CONTENDED)).as("others kept trying").isPositive();
		assertThat(report.releases(ReleaseOutcome.RELEASED)).isEqualTo(report.acquisitions());

		Duration renewalInterval = ttl.dividedBy(3);
		try (Redlock redlock = Redlock.builder().nodes(nodes.uris()).settings(PATIENT).build()) {
			// renewal stops at release: the key is gone within one renewal interval and
			// nothing renews it again
			Lease renewed = redlock
				.acquire(LockRequest.of(ExclusionHarness.RESOURCE, ttl).named("faults"), Duration.ZERO)
				.autoRenew();
			ExclusionHarness.awaitTrue("renewed twice", ttl.multipliedBy(10), () -> renewed.extensionAttempts() >= 2);
			long releaseStart = System.nanoTime();
			assertThat(renewed.release()).isEqualTo(ReleaseOutcome.RELEASED);
			int extensions = renewed.extensionAttempts();
			ExclusionHarness.awaitTrue("the key is gone after release", renewalInterval.plus(MARGIN),
					() -> keyCount(nodes) == 0);
			long goneAfterRelease = System.nanoTime() - releaseStart;
			long watchUntil = System.nanoTime() + renewalInterval.plus(MARGIN).toNanos();
			while (System.nanoTime() - watchUntil < 0) {
				assertThat(keyCount(nodes)).as("the key stays gone").isZero();
				assertThat(renewed.extensionAttempts()).as("no renewal after release").isEqualTo(extensions);
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
			}
			assertThat(renewed.isAutoRenewing()).isFalse();

			// renewal stops at maxHold: the key expires by maxHold + ttl though the
			// holder never releases
			Duration maxHold = ttl.multipliedBy(2);
			long acquireStart = System.nanoTime();
			Lease bounded = redlock
				.acquire(LockRequest.of(ExclusionHarness.RESOURCE, ttl).named("faults"), Duration.ZERO)
				.autoRenew(maxHold);
			ExclusionHarness.awaitTrue("the key expires after maxHold", maxHold.plus(ttl).plus(LOADED_MARGIN),
					() -> keyCount(nodes) == 0);
			Duration goneAfter = Duration.ofNanos(System.nanoTime() - acquireStart);
			System.out.printf(
					"scenario 7: after release the key was gone in %.1f ms (bound %d ms) and stayed gone;"
							+ " with maxHold %d ms it expired %d ms after acquisition (bound %d ms), %d extensions%n",
					goneAfterRelease / 1e6, renewalInterval.plus(MARGIN).toMillis(), maxHold.toMillis(),
					goneAfter.toMillis(), maxHold.plus(ttl).plus(LOADED_MARGIN).toMillis(),
					bounded.extensionAttempts());
			assertThat(goneAfter).as("renewed past its ttl until maxHold").isGreaterThanOrEqualTo(maxHold);
			assertThat(bounded.isAutoRenewing()).isFalse();
			ExclusionHarness.awaitTrue("the lease reports itself lost", CLEAN_UP, bounded::isLost);
			assertThat(bounded.lossReason()).contains(LossReason.VALIDITY_RAN_OUT);
			assertThat(bounded.release()).isEqualTo(ReleaseOutcome.EXPIRED);
		}
	}

	/**
	 * A holder's lock is on all five nodes; three of them are restarted without
	 * persistence and forget it. With the restart quarantine they do not count towards a
	 * quorum until the longest TTL has passed since they started, so a competing client
	 * gets no quorum while the first lease is valid, trial after trial.
	 */
	@Test
	void restartedNodesThatHeldTheLockNeverGiveASecondHolderWithTheQuarantine(RedisNodes nodes) {
		Trials trials = restartTrials(nodes, Duration.ofMillis(1500), 5);
		System.out.println(trials.line("5 restart three holding nodes, quarantine 1.5 s"));

		assertThat(trials.count).isGreaterThanOrEqualTo(5);
		assertThat(trials.secondHolders).as("second holders while the first was valid").isZero();
		assertThat(trials.overlaps).as("overlapping lease intervals").isZero();
		assertThat(trials.quarantineRejections).as("attempts refused because of the quarantine").isPositive();
		assertThat(trials.secondAttempts).isGreaterThanOrEqualTo(trials.count);
	}

	/**
	 * The same trials with the quarantine off: the restarted nodes grant at once and the
	 * oracle sees the overlap, so the test above can fail.
	 */
	@Test
	void withoutTheQuarantineTheOracleSeesRestartedNodesGiveASecondHolder(RedisNodes nodes) {
		Trials trials = restartTrials(nodes, Duration.ZERO, 5);
		System.out.println(trials.line("5 restart three holding nodes, quarantine off (must fail)"));

		assertThat(trials.count).isGreaterThanOrEqualTo(5);
		assertThat(trials.secondHolders).as("second holders while the first was valid").isEqualTo(trials.count);
		assertThat(trials.overlaps).as("overlapping lease intervals").isEqualTo(trials.count);
		assertThat(trials.violations()).isPositive();
	}

	/**
	 * Each trial: A acquires with a TTL equal to the quarantine; three nodes holding its
	 * key are killed and restarted empty while A holds it; B then tries, one attempt at a
	 * time, until it gets the lock or A's validity ends. The interval oracle runs on A's
	 * and B's {@code [acquired, min(release started, validity end)]}. The TTL is seconds
	 * (1.5 s, 5 s with the quarantine off), so that A's lease outlasts three restarts
	 * (about 50 ms each) however slowly a busy machine makes them.
	 */
	private static Trials restartTrials(RedisNodes nodes, Duration quarantine, int trialCount) {
		boolean on = !quarantine.isZero();
		Duration ttl = on ? quarantine : Duration.ofSeconds(5);
		RedlockSettings settings = PATIENT.withDefaultTtl(ttl).withRestartQuarantine(quarantine);
		// a trial lasts about a TTL at most, and A's acquisition waits for the previous
		// trial's quarantine and any back-off: a safety net only, the trials end by count
		Duration budget = ttl.plus(PATIENT_RECONNECT_BACKOFF).plusSeconds(3).multipliedBy(trialCount);
		Trials trials = new Trials();
		try (Redlock a = Redlock.builder().nodes(nodes.uris()).settings(settings).build();
				Redlock b = Redlock.builder().nodes(nodes.uris()).settings(settings).build()) {
			// connections open before the first restarts: one still being opened
			// while its node restarts fails, and the node is not tried again for a
			// few node timeouts
			WarmPools.await(a);
			WarmPools.await(b);
			long end = System.nanoTime() + budget.toNanos();
			while (trials.count < trialCount && System.nanoTime() - end < 0) {
				// the nodes restarted by the previous trial count again once their
				// quarantine is over, and A connects to them again once a back-off the
				// restarts may have caused is over
				long attemptStart = System.nanoTime();
				Lease first = a.acquire(LockRequest.of(ExclusionHarness.RESOURCE, ttl).named("faults"),
						quarantine.plus(PATIENT_RECONNECT_BACKOFF).plusSeconds(3));
				long firstAcquired = System.nanoTime();
				trials.attemptNanos.add(firstAcquired - attemptStart);
				long firstValidityEnd = firstAcquired + first.remainingValidity().toNanos();
				List<Interval> intervals = new ArrayList<>();

				List<RedisNode> holding = new ArrayList<>();
				for (RedisNode node : nodes.nodes()) {
					if (holding.size() < 3 && node.command("GET", "redlock:" + ExclusionHarness.RESOURCE) != null) {
						holding.add(node);
					}
				}
				assertThat(holding).as("nodes holding A's lock").hasSize(3);
				for (RedisNode node : holding) {
					node.kill();
					node.restart();
				}
				if (on) {
					// both clients read the new uptime now; A's next trial then waits for
					// the quarantine to end
					a.checkNodes();
				}
				assertThat(first.isValid()).as("A is still valid after the restarts").isTrue();

				Lease second = null;
				long secondAcquired = 0;
				while (second == null && first.isValid()) {
					long start = System.nanoTime();
					try {
						second = b.acquire(LockRequest.of(ExclusionHarness.RESOURCE, ttl).named("faults"),
								Duration.ZERO);
						secondAcquired = System.nanoTime();
						if (first.isValid()) {
							trials.secondHolders++;
						}
					}
					catch (LockNotAcquiredException ex) {
						if (ex.failedNodes().stream().anyMatch((failed) -> failed.contains("in quarantine"))) {
							trials.quarantineRejections++;
						}
					}
					trials.secondAttempts++;
					trials.attemptNanos.add(System.nanoTime() - start);
					if (second == null) {
						LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
					}
				}
				if (second != null) {
					long secondValidityEnd = secondAcquired + second.remainingValidity().toNanos();
					long releaseStart = System.nanoTime();
					second.release();
					intervals.add(new Interval(secondAcquired, Math.min(releaseStart, secondValidityEnd)));
				}
				long releaseStart = System.nanoTime();
				first.release();
				intervals.add(new Interval(firstAcquired, Math.min(releaseStart, firstValidityEnd)));
				trials.overlaps += Report.overlaps(intervals);
				trials.acquisitions += intervals.size();
				trials.count++;
			}
		}
		return trials;
	}

	/** Counts over the restart trials of scenario 5. */
	private static final class Trials {

		int count;

		long acquisitions;

		long secondAttempts;

		long secondHolders;

		long quarantineRejections;

		long overlaps;

		final List<Long> attemptNanos = new ArrayList<>();

		long violations() {
			return this.secondHolders + this.overlaps;
		}

		String line(String scenario) {
			return String.format(
					"scenario %s: acquisitions=%d violations=%d p99Attempt=%.1f ms [trials=%d,"
							+ " B attempts=%d, B holders while A valid=%d, overlaps=%d, refused by quarantine=%d]",
					scenario, this.acquisitions, violations(), p99(this.attemptNanos) / 1e6, this.count,
					this.secondAttempts, this.secondHolders, this.overlaps, this.quarantineRejections);
		}

	}

	private static long p99(List<Long> nanos) {
		if (nanos.isEmpty()) {
			return 0;
		}
		List<Long> sorted = new ArrayList<>(nanos);
		sorted.sort(null);
		return sorted.get(Math.max(0, (int) Math.ceil(sorted.size() * 0.99) - 1));
	}

	private static void assertExclusive(Report report) {
		assertThat(report.overstays()).as("critical sections that outlived their lease (test set-up)").isZero();
		assertThat(report.occupancyViolations()).as("occupancy above 1").isZero();
		assertThat(report.registerLostUpdates()).as("register updates lost").isZero();
		assertThat(report.overlaps()).as("overlapping lease intervals").isZero();
		assertThat(report.leasesWithoutValidity()).as("leases returned with no validity").isZero();
		assertThat(report.violations()).isZero();
		assertThat(report.acquisitions()).isPositive();
	}

	/**
	 * A scenario on the nodes with {@link #SETTINGS} and {@link #TTL} that begins with 30
	 * acquisitions on healthy nodes.
	 */
	private static ExclusionHarness afterAHealthyPhase(String scenario, RedisNodes nodes) {
		return ExclusionHarness.scenario(scenario, nodes.uris(), SETTINGS, TTL)
			.phase("healthy", Fault.NONE, Until.acquisitions(30), Duration.ofSeconds(2));
	}

	/** Exclusive throughout, and every attempt within the bound. */
	private static void assertExclusiveInBoundedAttempts(Report report) {
		assertExclusive(report);
		assertThat(report.maxAttempt()).isLessThan(ATTEMPT_BOUND);
	}

	/** A phase that still acquired, every attempt within the bound. */
	private static void assertServedInBoundedAttempts(PhaseStats phase) {
		assertThat(phase.acquisitions()).isPositive();
		assertThat(phase.maxAttempt()).isLessThan(ATTEMPT_BOUND);
	}

	/** A phase that acquired nothing, every attempt failing fast for want of a quorum. */
	private static void assertRefusedForWantOfAQuorum(PhaseStats phase) {
		assertThat(phase.acquisitions()).isZero();
		assertThat(phase.failureCount()).isPositive().isEqualTo(phase.failures(NO_QUORUM));
		assertThat(phase.maxAttempt()).isLessThan(ATTEMPT_BOUND);
	}

	/**
	 * A phase after the fault was lifted: locks are granted again, and what the fault
	 * left on the nodes goes away.
	 */
	private static void assertRecovered(PhaseStats phase, RedisNodes nodes) {
		assertThat(phase.acquisitions()).isPositive();
		awaitNoLockKeys(nodes);
	}

	/**
	 * Waits until no lock key is left: what failed attempts left is released or expires
	 * with its TTL.
	 */
	private static void awaitNoLockKeys(RedisNodes nodes) {
		ExclusionHarness.awaitTrue("no lock keys are left", CLEAN_UP, () -> keyCount(nodes) == 0);
	}

	/**
	 * The nodes that answer (running, not paused) on which the lock key exists, read
	 * directly; {@code EXISTS} also expires a key whose TTL is over, where {@code DBSIZE}
	 * counts it until the node's active expiry finds it.
	 */
	private static long keyCount(RedisNodes nodes) {
		return nodes.nodes()
			.stream()
			.filter((node) -> node.isRunning() && !node.isPaused())
			.filter((node) -> "1".equals(node.command("EXISTS", "redlock:" + ExclusionHarness.RESOURCE)))
			.count();
	}

	private static List<String> values(RedisNodes nodes) {
		List<String> values = new ArrayList<>();
		for (RedisNode node : nodes.nodes()) {
			values.add(node.command("GET", "redlock:" + ExclusionHarness.RESOURCE));
		}
		return values;
	}

}
