package dev.redlock.core.internal.quarantine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.redlock.core.RedlockSettings;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The forgetful-node guards explored over every case they claim, by a deterministic
 * simulation: no sockets, scripted clocks, the library's own {@link NodeJudge},
 * {@link ClockReadings}, {@link NodeQuarantine} and {@link MarkerWatch} judging replies
 * built from simulated nodes ({@link SimNode}, {@link SimClient}).
 *
 * <p>
 * Each case: N nodes (3, 5, 7), of which {@code faulty} (1 to {@code f = N - quorum}) are
 * in holder A's quorum and suffer one fault while A's lease is valid, the other nodes of
 * A's quorum being honest and the rest never receiving A's {@code SET} (the worst case:
 * A's quorum is bare). The honest clocks stand at the extremes of what the clock
 * tolerance allows, in six patterns. Client B — new, one that met the nodes seconds ago,
 * a busy one, or one idle for days (whose probes still run, as a running client's do) —
 * then tries the same resource, its replies read in every order of the first
 * {@code quorum} replies (up to the nodes' roles and clocks: the judge treats nodes
 * alike, so one order stands for every set of nodes in those roles). Holder and acquirer
 * TTLs are the shortest the settings accept with 10 ms of validity left (170 ms) and the
 * longest (the quarantine).
 *
 * <p>
 * The faults: a forward step of the clock just under, at and just over the largest step
 * the tolerance hides, twice that, the TTL, and 120 s; a backward excursion before A
 * locks, corrected forward while A holds (B tries right after the fault and just before
 * A's validity ends, with no probe in between); and the losses of state: a reload of a
 * dump taken before A locked ({@code DEBUG RELOAD}), a whole-process snapshot restored (a
 * VM: keys and statistics alike, connections broken), {@code FLUSHALL}, a restart without
 * persistence, and an eviction of A's key after the policy was changed at run time (B
 * tries right after the fault and once a probe period has passed).
 *
 * <p>
 * The oracle is physical: a node that granted B while A's key was gone from it and A's
 * lease was still valid must never count in B's round, at any point of the early exit.
 * The simulation also checks that it is not vacuous (rounds where nodes really dropped
 * A's key while A was valid) and that the guards cost no availability they need not: B,
 * after trying, takes a free resource (no more than {@code f} nodes are faulty, so the
 * honest ones make a quorum). Two windows are known and documented
 * ({@code docs/guarantees.md}): a snapshot restored, seen by a client that never read the
 * node before, and an eviction after a policy changed at run time, seen by a client whose
 * connections stay open, count until the first probe of any running client reads the
 * node; they are counted apart, and must be closed once a probe period has passed.
 */
class ForgetfulMinoritySimulationTests {

	private static final RedlockSettings SETTINGS = RedlockSettings.defaults();

	private static final long MS = 1_000_000L;

	private static final long SECOND = 1_000 * MS;

	private static final long DAY = 86_400 * SECOND;

	@ParameterizedTest(name = "N = {0}")
	@ValueSource(ints = { 3, 5, 7 })
	void noNodeThatDroppedAKeyOfAValidLeaseEverCounts(int n) {
		Tally tally = explore(n, SETTINGS, SETTINGS.clockTolerance().toNanos(), Fault.values(), 0);
		System.out.println(tally);
		assertThat(tally.violations).as("rounds where a node that dropped a key of a valid lease counted (%s)", tally)
			.isEmpty();
		assertThat(tally.dangerous).as("rounds where a node had dropped a key of a valid lease").isPositive();
		assertThat(tally.unavailable).as("rounds after which B could not take a free lock (%s)", tally).isEmpty();
	}

	@ParameterizedTest(name = "N = {0}")
	@ValueSource(ints = { 3, 5 })
	void grantsThatWaitedForReplicasLongerThanTheToleranceStillCountAndNoneThatDroppedAKey(int n) {
		// every other node is a voter that waits for its replicas (?waitReplicas): its
		// reply comes twice the clock tolerance after its clock was read
		long wait = 2 * SETTINGS.clockTolerance().toNanos();
		Tally tally = explore(n, SETTINGS, SETTINGS.clockTolerance().toNanos(), Fault.values(), wait);
		System.out.println("waiting for replicas: " + tally);
		assertThat(tally.violations).as("%s", tally).isEmpty();
		assertThat(tally.dangerous).isPositive();
		assertThat(tally.unavailable).as("rounds after which B could not take a free lock (%s)", tally).isEmpty();
	}

	@Test
	void theSimulationFindsSecondHoldersWhenTheClockGuardIsBlind() {
		// a judge whose tolerance is beyond any step clears every clock, while the
		// leases keep the allowance of the real tolerance: the clock guard is off
		Tally tally = explore(5, SETTINGS, Duration.ofMinutes(10).toNanos(), Fault.clockFaults(), 0);
		assertThat(tally.violations).as("%s", tally).isNotEmpty();
	}

	/**
	 * @param replicaWait how long the replies of the nodes of even index wait for
	 * replicas after they ran, 0 for none
	 */
	private static Tally explore(int n, RedlockSettings settings, long judgeTolerance, Fault[] faults,
			long replicaWait) {
		int f = n - (n / 2 + 1);
		long quarantine = settings.restartQuarantine().toNanos();
		long[] ttls = { shortestTtl(settings), quarantine };
		List<Scenario> scenarios = new ArrayList<>();
		for (int faulty = 1; faulty <= f; faulty++) {
			for (Fault fault : faults) {
				for (ClientState state : ClientState.values()) {
					for (long ttlA : ttls) {
						for (long ttlB : fault.clock ? ttls : new long[] { quarantine }) {
							for (int honestPattern = 0; honestPattern < (fault.clock ? 6 : 1); honestPattern++) {
								for (Timing timing : fault.timings()) {
									scenarios.add(new Scenario(settings, judgeTolerance, n, faulty, fault, state, ttlA,
											ttlB, honestPattern, timing, replicaWait));
								}
							}
						}
					}
				}
			}
		}
		// each case on its own simulated nodes and clients: the cases run side by side
		return scenarios.parallelStream().map((scenario) -> {
			Tally tally = new Tally(n);
			tally.cases++;
			for (int[] order : scenario.orders()) {
				scenario.run(order, tally);
			}
			return tally;
		}).reduce(new Tally(n), Tally::plus);
	}

	/**
	 * The shortest TTL that leaves a lease 10 ms of validity: the drift allowance takes
	 * the rest.
	 */
	private static long shortestTtl(RedlockSettings settings) {
		long floor = settings.driftNanosFor(0) + 10 * MS;
		return (long) Math.ceil(floor / (1 - settings.clockDriftFactor()) / MS) * MS;
	}

	/** What can go wrong with a faulty node while A holds. */
	enum Fault {

		STEP_JUST_UNDER_THE_BOUND(true), STEP_AT_THE_BOUND(true), STEP_JUST_OVER_THE_BOUND(true),
		STEP_TWICE_THE_BOUND(true), STEP_BY_THE_TTL(true), STEP_BY_120_S(true),
		BACKWARD_EXCURSION_THEN_CORRECTION(true), DUMP_RELOADED(false), SNAPSHOT_RESTORED(false), FLUSHED(false),
		RESTARTED(false), EVICTED(false);

		final boolean clock;

		Fault(boolean clock) {
			this.clock = clock;
		}

		Timing[] timings() {
			return this.clock ? new Timing[] { Timing.AT_ONCE, Timing.BEFORE_A_RUNS_OUT }
					: new Timing[] { Timing.AT_ONCE, Timing.AFTER_A_PROBE };
		}

		static Fault[] clockFaults() {
			return Arrays.stream(values()).filter((fault) -> fault.clock).toArray(Fault[]::new);
		}

	}

	/** What client B knew of the nodes before it tries. */
	enum ClientState {

		NEW, MET_SECONDS_AGO, BUSY, IDLE_FOR_DAYS

	}

	/** When B tries, after the fault. */
	enum Timing {

		AT_ONCE, BEFORE_A_RUNS_OUT, AFTER_A_PROBE

	}

	/** What the exploration found. */
	private static final class Tally {

		final int n;

		int cases;

		int rounds;

		int held;

		int dangerous;

		final List<String> violations = new ArrayList<>();

		/** Violations in the documented windows. */
		int inWindow;

		final List<String> unavailable = new ArrayList<>();

		Tally(int n) {
			this.n = n;
		}

		Tally plus(Tally other) {
			Tally sum = new Tally(this.n);
			sum.cases = this.cases + other.cases;
			sum.rounds = this.rounds + other.rounds;
			sum.held = this.held + other.held;
			sum.dangerous = this.dangerous + other.dangerous;
			sum.inWindow = this.inWindow + other.inWindow;
			sum.violations.addAll(this.violations);
			sum.violations.addAll(other.violations);
			sum.unavailable.addAll(this.unavailable);
			sum.unavailable.addAll(other.unavailable);
			return sum;
		}

		@Override
		public String toString() {
			return "N = " + this.n + ": " + this.cases + " cases, " + this.rounds + " rounds of B (" + this.held
					+ " while A held, " + this.dangerous + " with a key of A's valid lease dropped), "
					+ this.violations.size() + " violations, " + this.inWindow
					+ " counted in the documented windows before a probe, " + this.unavailable.size()
					+ " without a free lock" + (this.violations.isEmpty() ? "" : "; first: " + this.violations.get(0))
					+ (this.unavailable.isEmpty() ? "" : "; first unavailable: " + this.unavailable.get(0));
		}

	}

	/** One case, run once per order of B's replies. */
	private record Scenario(RedlockSettings settings, long judgeTolerance, int n, int faulty, Fault fault,
			ClientState state, long ttlA, long ttlB, int honestPattern, Timing timing, long replicaWait) {

		int quorum() {
			return this.n / 2 + 1;
		}

		/** 0: faulty, in A's quorum; 1: honest, in A's quorum; 2: missed A's SET. */
		int role(int node) {
			if (node < this.faulty) {
				return 0;
			}
			return (node < quorum()) ? 1 : 2;
		}

		/**
		 * Every order of the first quorum replies, up to roles and clocks; the rest
		 * follow.
		 */
		List<int[]> orders() {
			List<int[]> orders = new ArrayList<>();
			permute(new int[this.n], new boolean[this.n], 0, orders, new HashSet<>());
			return orders;
		}

		private void permute(int[] prefix, boolean[] used, int depth, List<int[]> orders, Set<String> seen) {
			if (depth == quorum()) {
				StringBuilder signature = new StringBuilder();
				for (int i = 0; i < depth; i++) {
					signature.append(role(prefix[i])).append(clockSign(prefix[i])).append(replicaWait(prefix[i]));
				}
				if (seen.add(signature.toString())) {
					int[] order = Arrays.copyOf(prefix, this.n);
					int at = depth;
					for (int node = 0; node < this.n; node++) {
						if (!used[node]) {
							order[at++] = node;
						}
					}
					orders.add(order);
				}
				return;
			}
			for (int node = 0; node < this.n; node++) {
				if (!used[node]) {
					used[node] = true;
					prefix[depth] = node;
					permute(prefix, used, depth + 1, orders, seen);
					used[node] = false;
				}
			}
		}

		/**
		 * Where a node's clock stands before any fault, either way from the common time:
		 * patterns 0 to 3 at the extremes of what still clears (half the tolerance, less
		 * the round's time to read the replies), 4 and 5 at the extremes of what the
		 * tolerance assumes (half of it), where clearing needs luck but safety must hold.
		 */
		int clockSign(int node) {
			boolean missed = role(node) == 2;
			return switch (this.honestPattern) {
				case 0 -> 1;
				case 1 -> -1;
				case 2, 4 -> missed ? -1 : 1;
				default -> missed ? 1 : -1;
			};
		}

		/**
		 * The order the replies of a round arrive in when the nodes answer alike but for
		 * their wait for replicas: the nodes that wait come last. A round's replies read
		 * in another order are read late, which B's contested round explores.
		 */
		int[] inArrivalOrder(int[] order) {
			int[] arrival = new int[order.length];
			int at = 0;
			for (boolean waits : new boolean[] { false, true }) {
				for (int node : order) {
					if ((replicaWait(node) > 0) == waits) {
						arrival[at++] = node;
					}
				}
			}
			return arrival;
		}

		long replicaWait(int node) {
			return (node % 2 == 0) ? this.replicaWait : 0;
		}

		long clockOffset(int node) {
			long half = tolerance() / 2;
			return clockSign(node) * (atTheAssumedExtreme() ? half : half - MS);
		}

		boolean atTheAssumedExtreme() {
			return this.honestPattern >= 4;
		}

		long tolerance() {
			return this.settings.clockTolerance().toNanos();
		}

		/** The largest step of a node's clock that may go unseen: three tolerances. */
		long stepBound() {
			return 3 * tolerance();
		}

		long stepSize() {
			long bound = stepBound();
			return switch (this.fault) {
				case STEP_JUST_UNDER_THE_BOUND -> bound - MS;
				case STEP_AT_THE_BOUND -> bound;
				case STEP_JUST_OVER_THE_BOUND -> bound + MS;
				case STEP_TWICE_THE_BOUND -> 2 * bound;
				case STEP_BY_THE_TTL -> this.ttlA;
				case STEP_BY_120_S, BACKWARD_EXCURSION_THEN_CORRECTION -> 120 * SECOND;
				default -> 0;
			};
		}

		/** Whether B tries in a window the documentation names, before any probe. */
		boolean inDocumentedWindow() {
			return this.timing == Timing.AT_ONCE
					&& ((this.fault == Fault.SNAPSHOT_RESTORED && this.state == ClientState.NEW)
							|| (this.fault == Fault.EVICTED && this.state != ClientState.NEW));
		}

		void run(int[] order, Tally tally) {
			long quarantine = this.settings.restartQuarantine().toNanos();
			long tA = 10 * DAY;
			SimClient.SimTime time = new SimClient.SimTime(0);
			List<SimNode> nodes = new ArrayList<>();
			int[] all = new int[this.n];
			for (int i = 0; i < this.n; i++) {
				SimNode node = new SimNode(i, clockOffset(i), 0);
				NodeMarker clean = NodeMarker.create(0, null, NodeMarker.NOT_PROMOTED, node.report(0).evidence());
				node.writeMarker("", clean.head(), clean.evidence(), 0);
				nodes.add(node);
				all[i] = i;
			}
			all = inArrivalOrder(all);
			SimClient a = new SimClient(time, nodes, this.settings, this.judgeTolerance, 7 * SECOND);
			SimClient b = new SimClient(time, nodes, this.settings, this.judgeTolerance, -3 * SECOND);
			long[] waits = new long[this.n];
			Arrays.setAll(waits, this::replicaWait);
			a.waitForReplicas(waits);
			b.waitForReplicas(waits);
			long period = a.quarantine(0).probePeriodNanos();
			// A has known the nodes for long
			time.set(tA - 2 * quarantine - SECOND);
			a.acquire("other-a", "a0", SECOND, all);
			switch (this.state) {
				case BUSY -> {
					// long known, and locking up to the fault (below, with its probes)
					time.set(tA - 2 * quarantine - 2 * SECOND);
					b.acquire("other-b", "b-long-ago", SECOND, all);
					time.set(tA - quarantine);
					b.acquire("other-b", "b-earlier", SECOND, all);
				}
				case IDLE_FOR_DAYS -> {
					time.set(tA - 3 * DAY);
					b.acquire("other-b", "b-idle", SECOND, all);
				}
				case MET_SECONDS_AGO -> {
					time.set(tA - 10 * SECOND);
					b.acquire("other-b", "b-recent", SECOND, all);
				}
				case NEW -> {
				}
			}
			// a dump, or a snapshot of the whole process, taken shortly before A locks
			List<Map<String, SimNode.Key>> dumps = new ArrayList<>();
			long[][] statistics = new long[this.n][];
			time.set(tA - 3 * period - MS);
			for (SimNode node : nodes) {
				dumps.add(node.snapshot());
				statistics[node.index] = new long[] { node.flushes(), node.debugs(), node.evictedKeys() };
			}
			// the running clients probe every period until A locks
			for (long at = tA - 3 * period; at < tA; at += period) {
				time.set(at);
				a.probe();
				if (this.state != ClientState.NEW) {
					b.probe();
				}
				if (this.state == ClientState.BUSY) {
					time.advance(MS);
					b.acquire("other-b", "b-" + at, SECOND, all);
				}
			}
			if (this.fault == Fault.BACKWARD_EXCURSION_THEN_CORRECTION) {
				time.set(tA - 2 * MS);
				for (int i = 0; i < this.faulty; i++) {
					nodes.get(i).step(-stepSize());
				}
			}
			time.set(tA);
			int[] quorumOfA = inArrivalOrder(Arrays.copyOf(all, quorum()));
			SimClient.Round held = a.acquire("resource", "A", this.ttlA, quorumOfA);
			if (!held.won()) {
				// only the clocks stepped back before A locks may refuse A
				if (!atTheAssumedExtreme() && this.fault != Fault.BACKWARD_EXCURSION_THEN_CORRECTION) {
					tally.unavailable.add("A, " + describe(order));
				}
				return;
			}
			long validUntilA = held.start() + this.ttlA - this.settings.driftNanosFor(this.ttlA);
			long faultAt = held.start() + MS;
			time.set(faultAt);
			for (int i = 0; i < this.faulty; i++) {
				SimNode node = nodes.get(i);
				switch (this.fault) {
					case DUMP_RELOADED -> node.reload(dumps.get(i));
					case SNAPSHOT_RESTORED -> {
						long[] stats = statistics[i];
						node.restore(dumps.get(i), stats[0], stats[1], stats[2]);
						a.disconnected(i);
						b.disconnected(i);
					}
					case FLUSHED -> node.flushAll();
					case RESTARTED -> {
						node.restart(faultAt);
						a.disconnected(i);
						b.disconnected(i);
					}
					case EVICTED -> node.evict("resource", "volatile-lru");
					default -> node.step(stepSize());
				}
			}
			long tB = switch (this.timing) {
				case AT_ONCE -> faultAt + MS;
				case BEFORE_A_RUNS_OUT -> validUntilA - 2 * MS;
				case AFTER_A_PROBE -> faultAt + period + MS;
			};
			if (tB <= faultAt || tB >= validUntilA) {
				return;
			}
			if (this.timing == Timing.AFTER_A_PROBE) {
				// A, a running client, probes once in that period; B too, if it runs
				time.set(faultAt + period / 2);
				a.probe();
				if (this.state != ClientState.NEW) {
					b.probe();
				}
			}
			time.set(tB);
			tally.held++;
			tally.rounds += 2;
			SimClient.Round tried = b.acquire("resource", "B", this.ttlB, order);
			boolean dangerous = false;
			for (int i = 0; i < this.faulty; i++) {
				// A's key is gone from A's node i while A's lease is valid
				boolean dropped = tried.granted()[i] && tried.start() < validUntilA;
				dangerous |= dropped;
				if (dropped && tried.everCounted()[i]) {
					if (inDocumentedWindow()) {
						tally.inWindow++;
					}
					else {
						tally.violations.add(describe(order) + ": node " + i + " counted, B won: " + tried.won());
					}
				}
			}
			if (dangerous) {
				tally.dangerous++;
			}
			time.advance(MS);
			if (!b.acquire("free", "B", this.ttlB, inArrivalOrder(order)).won() && !atTheAssumedExtreme()) {
				tally.unavailable.add(describe(order));
			}
		}

		private String describe(int[] order) {
			return this.faulty + " faulty, " + this.fault + (this.fault.clock ? " (" + stepSize() / MS + " ms)" : "")
					+ ", B " + this.state + ", TTL of A " + this.ttlA / MS + " ms, of B " + this.ttlB / MS
					+ " ms, honest clocks " + this.honestPattern + ", " + this.timing + ", order "
					+ Arrays.toString(order) + ((this.replicaWait > 0) ? ", even nodes waiting for replicas" : "");
		}

	}

}
