package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Clock faults on a minority of the nodes that A, the first holder, needs: A holds its
 * lock on nodes 0, 1 and 2 only (a bare quorum of 5; its {@code SET} never reached 3 and
 * 4), then the clocks of some of A's nodes step so that A's key expires there early, and
 * B tries the same resource while A's lease is valid. B must get no lock then, whether it
 * is warm (it has read every node before) or brand new (built after the fault): each
 * judges the clocks read in its round by their consensus, which a minority of stepped
 * clocks cannot sway.
 *
 * <p>
 * The faults: two of the five clocks step forward together, B's links slow to nodes 0 and
 * 4 so that B hears the two stepped clocks and one other first (with even links, the
 * order of replies decided whether the code before gave a second holder); a step too
 * small for a check based on the acquirer's long TTL but larger than the holder's short
 * TTL absorbs; a clock stepped back before A locks (no holder counts it, so its
 * correction drops no lease). Controls: a step on one node of a holder of all five (safe;
 * one clock stepping under a bare quorum is {@link ClockStepTests}), and two clocks
 * stepping with every guard off (a second holder: the oracle can fail). Each failing row
 * gave B a second holder on the code before the consensus (seen failing). Five nodes on
 * the embedded Redis binary under libfaketime: run where Debian's {@code faketime}
 * package is installed (the Maven profile {@code steppable-clock}).
 */
@Tag("steppable-clock")
class ForgetfulMinorityTests {

	private static final Duration QUARANTINE = Duration.ofSeconds(3);

	/** Quarantine on, every TTL 3 s. */
	private static final RedlockSettings SETTINGS = TestSupport.withQuarantine(QUARANTINE);

	/**
	 * Quarantine on, every TTL 6 s: for a brand-new B with slow links, whose first
	 * attempts wait the node timeout (1 s) each for nodes 0 and 4, still connecting over
	 * the slow links. When B's first probe judges the stepped clocks before its first
	 * attempt, B's first refusal comes about 2 s after B was built, and on a loaded
	 * machine later than A's 3 s lease, which left about 2.7 s then (seen: 0 attempts
	 * while A's lease was valid, on the code before the writer thread too).
	 */
	private static final RedlockSettings LONG_LEASES = TestSupport.withQuarantine(Duration.ofSeconds(6));

	/** A step that expires a 3 s or 6 s key at once and that every detector sees. */
	private static final Duration BIG_STEP = Duration.ofSeconds(120);

	/**
	 * For the mixed TTLs: a drift factor of 0.5, so that the window between the two TTLs'
	 * bounds is hundreds of milliseconds wide.
	 */
	private static final double WIDE_DRIFT = 0.5;

	/**
	 * The holder's short TTL: its drift allowance is 1,502 ms, which leaves its lease
	 * about 1.5 s of validity for the step and B's attempts (a 1 s TTL left 0.5 s, and a
	 * brand-new B on a loaded machine once made its first attempt only after that).
	 */
	private static final Duration SHORT_TTL = Duration.ofSeconds(3);

	/**
	 * B's long TTL, and both clients' restart quarantine in the mixed-TTL cases (a TTL
	 * may not exceed it): its drift allowance is 4,502 ms.
	 */
	private static final Duration LONG_TTL = Duration.ofSeconds(9);

	/**
	 * Above the short TTL's drift allowance (1,502 ms), so A's key expires on the stepped
	 * node about 370 ms before A's lease ends; below half the long TTL's (2,251 ms), the
	 * largest step the acquirer's checks let pass.
	 */
	private static final Duration BETWEEN_THE_BOUNDS = Duration.ofMillis(1875);

	/**
	 * How long B keeps trying in the mixed-TTL cases, at most: past the end of A's lease,
	 * where it stops, so that it tries after A's key expired on the stepped node.
	 */
	private static final Duration UNTIL_THE_LEASE_ENDS = Duration.ofSeconds(5);

	/** How far node 2's clock goes back before A locks: more than A's TTL. */
	private static final Duration EXCURSION = Duration.ofSeconds(4);

	/**
	 * One way, on B's slow links: far longer than a reply on loopback takes on a busy
	 * machine, far shorter than the node timeout (1 s).
	 */
	private static final Duration SLOW_LINK = Duration.ofMillis(250);

	/** How long B keeps trying, at most; it stops when A's lease ends. */
	private static final Duration TRYING = Duration.ofSeconds(1);

	private static RedisNodes nodes;

	/** What each test stepped, to step it back after the test. */
	private final Map<Integer, Duration> stepped = new HashMap<>();

	@BeforeAll
	static void startNodes() {
		nodes = RedisNodes.startWithSteppableClocks(5);
		ForgetfulNodes.awaitNodesUpFor(nodes, QUARANTINE.plusSeconds(1));
	}

	@AfterAll
	static void stopNodes() {
		nodes.close();
	}

	@AfterEach
	void stepClocksBack() {
		this.stepped.forEach((node, by) -> nodes.node(node).stepClock(by.negated()));
		this.stepped.clear();
	}

	@Test
	void twoSteppedClocksHeardBeforeTheOthersGiveNoSecondHolderToAWarmClient() {
		String resource = "minority-heard-first-warm";
		try (ForgetfulNodes scenario = new ForgetfulNodes(nodes, nodes.uris(), SETTINGS);
				SlowLinks slow = new SlowLinks(0, 4);
				Redlock warm = warmClient(scenario, slow.uris(), SETTINGS)) {
			Lease first = scenario.acquiredOnNodes012(resource);
			stepForward(first, resource, BIG_STEP, 1, 2);

			assertThat(ForgetfulNodes.refusedWhileValid(first, warm, resource, TRYING)).isPositive();
			first.release();
		}
	}

	@Test
	void twoSteppedClocksHeardBeforeTheOthersGiveNoSecondHolderToABrandNewClient() {
		String resource = "minority-heard-first-new";
		try (ForgetfulNodes scenario = new ForgetfulNodes(nodes, nodes.uris(), LONG_LEASES);
				SlowLinks slow = new SlowLinks(0, 4)) {
			ForgetfulNodes.awaitCounting(scenario.holder());
			Lease first = scenario.acquiredOnNodes012(resource);
			stepForward(first, resource, BIG_STEP, 1, 2);

			try (Redlock brandNew = redlock(slow.uris(), LONG_LEASES)) {
				assertThat(ForgetfulNodes.refusedWhileValid(first, brandNew, resource, TRYING)).isPositive();
			}
			first.release();
		}
	}

	@Test
	void aStepOnlyTheHoldersShortTtlCannotAbsorbGivesNoSecondHolderToAWarmClient() {
		String resource = "mixed-ttl-warm";
		RedlockSettings longTtl = TestSupport.withQuarantine(LONG_TTL).withClockDriftFactor(WIDE_DRIFT);
		RedlockSettings shortTtl = longTtl.withDefaultTtl(SHORT_TTL);
		try (ForgetfulNodes scenario = new ForgetfulNodes(nodes, nodes.uris(), shortTtl);
				Redlock warm = warmClient(scenario, longTtl)) {
			Lease first = scenario.acquiredOnNodes012(resource);
			stepForward(first, resource, BETWEEN_THE_BOUNDS, 2);

			assertThat(ForgetfulNodes.refusedWhileValid(first, warm, resource, UNTIL_THE_LEASE_ENDS)).isPositive();
			first.release();
		}
	}

	@Test
	void aStepOnlyTheHoldersShortTtlCannotAbsorbGivesNoSecondHolderToABrandNewClient() {
		String resource = "mixed-ttl-new";
		RedlockSettings longTtl = TestSupport.withQuarantine(LONG_TTL).withClockDriftFactor(WIDE_DRIFT);
		RedlockSettings shortTtl = longTtl.withDefaultTtl(SHORT_TTL);
		try (ForgetfulNodes scenario = new ForgetfulNodes(nodes, nodes.uris(), shortTtl)) {
			ForgetfulNodes.awaitCounting(scenario.holder());
			Lease first = scenario.acquiredOnNodes012(resource);
			stepForward(first, resource, BETWEEN_THE_BOUNDS, 2);

			ForgetfulNodes.assertNewClientRefusedWhileValid(first, nodes, longTtl, resource, UNTIL_THE_LEASE_ENDS);
			first.release();
		}
	}

	/**
	 * A backward step, to be corrected while A holds: no holder counts a node whose clock
	 * stands behind the others' (its correction would expire the keys set meanwhile), so
	 * A, which needs node 2, is refused, and the correction can drop no lease. A reads
	 * only nodes 0, 1 and 2: three clocks of which two might be the faulty ones, so it
	 * clears none of them and convicts none.
	 */
	@Test
	void aClockSteppedBackCountsForNoHolderSoItsCorrectionDropsNoLease() {
		String resource = "excursion";
		try (ForgetfulNodes scenario = new ForgetfulNodes(nodes, nodes.uris(), SETTINGS)) {
			ForgetfulNodes.awaitCounting(scenario.holder());
			step(2, EXCURSION.negated());
			scenario.assertHolderRefused(resource, TRYING);
		}
	}

	/** Control: a holder of all five nodes loses one; B can win no more than that one. */
	@Test
	void aStepOnOneNodeOfAHolderOfAllFiveGivesNoSecondHolderToABrandNewClient() {
		String resource = "all-five-new";
		try (Redlock holder = TestSupport.redlock(nodes, SETTINGS)) {
			ForgetfulNodes.awaitCounting(holder);
			Lease first = acquiredOnAllFive(holder, resource);
			stepForward(first, resource, BIG_STEP, 2);

			ForgetfulNodes.assertNewClientRefusedWhileValid(first, nodes, SETTINGS, resource, TRYING);
			first.release();
		}
	}

	/**
	 * Deliberate control, not a gap: with the restart quarantine off every guard against
	 * forgetful nodes is off, and two clocks stepping under A give B the lock while A's
	 * lease is valid. It shows that {@link ForgetfulNodes#refusedWhileValid} can fail in
	 * this very scenario.
	 */
	@Test
	void withEveryGuardOffTwoSteppedClocksDoGiveASecondHolder() {
		String resource = "guards-off";
		RedlockSettings guardsOff = everyGuardOff();
		try (ForgetfulNodes scenario = new ForgetfulNodes(nodes, nodes.uris(), guardsOff)) {
			Lease first = scenario.acquiredOnNodes012(resource);
			stepForward(first, resource, BIG_STEP, 1, 2);

			try (Redlock b = TestSupport.redlock(nodes, guardsOff)) {
				assertThatThrownBy(() -> ForgetfulNodes.refusedWhileValid(first, b, resource, TRYING))
					.isInstanceOf(AssertionError.class)
					.hasMessageContaining("a second holder while the first is valid");
			}
			first.release();
		}
	}

	/**
	 * The settings of the guards-off control: the kit's test settings, whose restart
	 * quarantine is zero (which turns off every detector of forgetful nodes), with a TTL
	 * of 3 s.
	 */
	private static RedlockSettings everyGuardOff() {
		RedlockSettings off = TestSupport.SETTINGS.withDefaultTtl(QUARANTINE);
		assertThat(off.restartQuarantine()).isEqualTo(Duration.ofSeconds(0));
		return off;
	}

	/**
	 * B, built next to A before the fault: once every node counts for both, B has read
	 * every node's marker, whose epoch and generation it remembers.
	 */
	private static Redlock warmClient(ForgetfulNodes scenario, RedlockSettings settings) {
		return warmClient(scenario, nodes.uris(), settings);
	}

	private static Redlock warmClient(ForgetfulNodes scenario, List<String> uris, RedlockSettings settings) {
		Redlock warm = redlock(uris, settings);
		ForgetfulNodes.awaitCounting(scenario.holder(), warm);
		ForgetfulNodes.awaitWarm(warm);
		return warm;
	}

	private static Redlock redlock(List<String> uris, RedlockSettings settings) {
		return Redlock.builder().nodes(uris).settings(settings).build();
	}

	/**
	 * B's links to some nodes are slow, {@link #SLOW_LINK} each way: its rounds hear from
	 * the other nodes first, and may settle on their replies alone.
	 */
	private static final class SlowLinks implements AutoCloseable {

		private final List<LatencyProxy> proxies = new ArrayList<>();

		private final List<String> uris = new ArrayList<>(nodes.uris());

		SlowLinks(int... slow) {
			for (int node : slow) {
				LatencyProxy proxy = LatencyProxy.to(nodes.node(node), SLOW_LINK);
				this.proxies.add(proxy);
				this.uris.set(node, proxy.uri());
			}
		}

		/** The five nodes as B reaches them. */
		List<String> uris() {
			return List.copyOf(this.uris);
		}

		@Override
		public void close() {
			this.proxies.forEach(LatencyProxy::close);
		}

	}

	private static Lease acquiredOnAllFive(Redlock holder, String resource) {
		Lease first = holder.acquire(resource, holder.settings().defaultTtl(), Duration.ofSeconds(5));
		assertThat(TestSupport.nodesWithKey(nodes, TestSupport.PREFIX + resource)).as("A's key on all five nodes")
			.isEqualTo(5);
		return first;
	}

	/**
	 * Steps the given nodes' clocks forward while A holds, and checks that A's key is
	 * gone from each, or expires there before A's lease ends.
	 */
	private void stepForward(Lease first, String resource, Duration by, int... stepped) {
		for (int node : stepped) {
			step(node, by);
		}
		for (int node : stepped) {
			ForgetfulNodes.assertGoneBeforeLeaseEnds(nodes.node(node), first, resource);
		}
	}

	private void step(int node, Duration by) {
		nodes.node(node).stepClock(by);
		this.stepped.merge(node, by, Duration::plus);
	}

}
