package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.redlock.core.RedlockListener.NodeCommand;
import dev.redlock.core.RedlockListener.NodeOutcome;
import dev.redlock.core.RedlockListener.NodeRequestEvent;
import dev.redlock.core.internal.protocol.LockScripts;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fencing tokens made on the quorum: they grow with every acquisition of a resource,
 * across holders, even when each acquisition reaches a different subset of nodes and the
 * nodes' counters are out of step; the second round is what makes them so, and it runs
 * only when the counters a quorum granted with are out of step.
 */
@WithRedisNodes(count = 5)
class FencingTokenTests {

	private static final String RESOURCE = "fenced";

	private static final String COUNTER = "{fence}redlock:" + RESOURCE;

	private static final Duration TTL = Duration.ofSeconds(5);

	/**
	 * For the runs over paused nodes: a SET a paused node had queued lands when it
	 * resumes, long after its client gave up, and holds the key until it expires; a short
	 * TTL keeps those stale keys short.
	 */
	private static final Duration SHORT_TTL = Duration.ofMillis(300);

	private static final Duration WAIT = Duration.ofSeconds(5);

	/** For the runs with the restart quarantine on: also the TTL of their locks. */
	private static final Duration QUARANTINE = Duration.ofSeconds(2);

	/** For the runs over paused nodes: a paused node costs an attempt 50 ms. */
	private final RedlockSettings settings = TestSupport.SETTINGS.withNodeTimeout(Duration.ofMillis(50))
		.withRetryDelay(Duration.ofMillis(5));

	/**
	 * Where no node is paused: the shared node timeout, so that a healthy node's reply
	 * that waited for a CPU on a busy machine does not fail a single attempt.
	 */
	private final RedlockSettings healthy = TestSupport.SETTINGS.withRetryDelay(Duration.ofMillis(5));

	@Test
	void tokensStrictlyIncreaseOverShiftingQuorumsAndCountersOutOfStep(RedisNodes nodes) {
		Random random = new Random(42);
		for (int i = 0; i < nodes.size(); i++) {
			nodes.node(i).command("SET", COUNTER, Integer.toString(random.nextInt(5_000)));
		}
		List<Long> tokens = new ArrayList<>();
		try (Redlock first = TestSupport.redlock(nodes, this.settings);
				Redlock second = TestSupport.redlock(nodes, this.settings)) {
			Set<Integer> paused = new TreeSet<>();
			// first the subsets that break tokens made in one round: with the node whose
			// counter is highest, then
			// without it; then random minorities down; from round 60 on, one node is dead
			// for good
			int highest = nodeWithHighestCounter(nodes);
			for (int round = 0; round < 100; round++) {
				if (round == 60) {
					resumeAll(nodes, paused);
					nodes.node(4).kill();
				}
				Set<Integer> down;
				if (round < 10) {
					down = (round % 2 == 0) ? othersThan(highest, 2, random) : Set.of(highest);
				}
				else if (round < 60) {
					down = randomNodes(random, 5, random.nextInt(3));
				}
				else {
					down = randomNodes(random, 4, random.nextInt(2));
				}
				pauseExactly(nodes, paused, down);
				for (int i = 0; i < 100; i++) {
					Redlock client = (i % 2 == 0) ? first : second;
					Lease lease = client.acquire(LockRequest.of(RESOURCE, SHORT_TTL).named("fencing").fenced(), WAIT);
					tokens.add(lease.fencingToken().orElseThrow());
					lease.release();
				}
			}
			resumeAll(nodes, paused);
		}
		long inversions = inversions(tokens);
		System.out.printf("fencing: %d acquisitions over shifting quorums, tokens %d..%d, %d inversions%n",
				tokens.size(), tokens.get(0), tokens.get(tokens.size() - 1), inversions);
		assertThat(tokens).hasSize(10_000);
		assertThat(inversions).isZero();
	}

	@Test
	void withoutTheSecondRoundTokensGoBackwards(RedisNodes nodes) {
		for (int i = 0; i < nodes.size(); i++) {
			nodes.node(i).command("SET", COUNTER, (i == 0) ? "5000" : "0");
		}
		List<Long> tokens = new ArrayList<>();
		Set<Integer> paused = new TreeSet<>();
		try (Redlock client = TestSupport.redlock(nodes, this.settings)) {
			client.internals().confirmTokens(false);
			for (int round = 0; round < 6; round++) {
				// node 0, whose counter is far ahead, takes part every other time
				pauseExactly(nodes, paused, (round % 2 == 0) ? Set.of(3, 4) : Set.of(0, 4));
				Lease lease = client.acquire(LockRequest.of(RESOURCE, SHORT_TTL).named("fencing").fenced(), WAIT);
				tokens.add(lease.fencingToken().orElseThrow());
				lease.release();
			}
		}
		finally {
			resumeAll(nodes, paused);
		}
		System.out.printf("fencing without the second round: tokens %s, %d inversions%n", tokens, inversions(tokens));
		assertThat(inversions(tokens)).isPositive();
	}

	@Test
	void theProtectedStoreRefusesAStaleHolder(RedisNodes nodes) {
		FencedStore store = new FencedStore();
		try (Redlock paused = TestSupport.redlock(nodes, this.healthy);
				Redlock next = TestSupport.redlock(nodes, this.healthy)) {
			Lease stale = paused.acquire(LockRequest.of(RESOURCE, Duration.ofMillis(500)).named("fencing").fenced(),
					Duration.ofSeconds(2));
			long staleToken = stale.fencingToken().orElseThrow();
			assertThat(store.write(staleToken, "first")).isTrue();
			// the holder stalls past its lease; meanwhile the lock expires and someone
			// else takes it
			TestSupport.awaitTrue("the first lease expires on the nodes", Duration.ofSeconds(5),
					() -> TestSupport.nodesWithKey(nodes, TestSupport.PREFIX + RESOURCE) == 0);
			Lease current = next.acquire(LockRequest.of(RESOURCE, TTL).named("fencing").fenced(),
					Duration.ofSeconds(2));
			assertThat(current.fencingToken().orElseThrow()).isGreaterThan(staleToken);
			assertThat(store.write(current.fencingToken().orElseThrow(), "second")).isTrue();
			// the stale holder wakes up and writes: refused
			assertThat(store.write(staleToken, "stale")).isFalse();
			assertThat(store.value()).isEqualTo("second");
			current.release();
		}
	}

	@Test
	void aLeaseWithoutFencingHasNoTokenAndExtendingKeepsIt(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, this.healthy)) {
			Lease plain = redlock.acquire("plain", TTL, Duration.ZERO);
			assertThat(plain.fencingToken()).isEmpty();
			plain.release();
			Lease fenced = redlock.tryAcquire(LockRequest.of(RESOURCE, TTL).named("fencing").fenced()).orElseThrow();
			long token = fenced.fencingToken().orElseThrow();
			assertThat(fenced.extend()).isTrue();
			assertThat(fenced.fencingToken()).hasValue(token);
			fenced.release();
		}
	}

	@Test
	void fencedLocksCallTheirScriptsByDigest(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, this.healthy)) {
			TestSupport.awaitWarmPools(redlock);
			nodes.nodes().forEach((node) -> node.command("CONFIG", "RESETSTAT"));
			Lease lease = redlock.tryAcquire(LockRequest.of("by-digest", TTL).named("fencing").fenced()).orElseThrow();
			assertThat(lease.fencingToken()).hasValue(1L);
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
			// the acquisition and the release by digest (the release natively where the
			// server can); no confirmation, since the
			// fresh counters all counted 1 (the slower nodes run the last calls a moment
			// after the quorum answered)
			TestSupport.awaitTrue("every node ran the acquisition's and the release's calls", Duration.ofSeconds(5),
					() -> nodes.nodes().stream().allMatch(FencingTokenTests::ranTheAcquisitionAndTheRelease));
			for (RedisNode node : nodes.nodes()) {
				assertThat(commandStats(node)).as("commands run on %s", node.uri())
					.doesNotContain("cmdstat_eval:")
					.doesNotContain("cmdstat_mget:");
			}
		}
	}

	@ParameterizedTest(name = "quarantine {0}")
	@ValueSource(booleans = { false, true })
	void nodesThatLostTheirScriptsStillGrantFencedLocks(boolean quarantine, RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, settings(quarantine))) {
			awaitReady(redlock);
			// with the quarantine, a lock may last no longer than it
			Duration ttl = quarantine ? QUARANTINE : TTL;
			long previous = 0;
			// every node, then a bare quorum, then a minority forgets the scripts the
			// connections loaded: the calls go again by source where they did
			for (int forgetting : new int[] { 5, 3, 1 }) {
				for (int i = 0; i < forgetting; i++) {
					nodes.node(i).command("SCRIPT", "FLUSH");
				}
				// so that the confirmation runs too
				staggerCounters(nodes, COUNTER, previous);
				Lease lease = redlock.acquire(LockRequest.of(RESOURCE, ttl).named("fencing").fenced(), WAIT);
				long token = lease.fencingToken().orElseThrow();
				assertThat(token).isGreaterThan(previous);
				previous = token;
				assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
			}
			// the last flush hit node 0 alone: the others settled its rounds, and the
			// scripts are cached there again all the same, else it would answer every
			// fenced lock with NOSCRIPT for good (within a few locks: a reply the round
			// handed to the late-reply thread is not tried again)
			for (int lock = 0; lock < 5 && !fencingScriptsCached(nodes.node(0), quarantine); lock++) {
				staggerCounters(nodes, COUNTER, counter(nodes, 4));
				redlock.acquire(LockRequest.of(RESOURCE, ttl).named("fencing").fenced(), WAIT).release();
			}
			assertThat(fencingScriptsCached(nodes.node(0), quarantine)).as("fencing scripts cached on node 0 again")
				.isTrue();
		}
		TestSupport.awaitTrue("the lock key is gone from every node", Duration.ofSeconds(5),
				() -> TestSupport.nodesWithKey(nodes, TestSupport.PREFIX + RESOURCE) == 0);
	}

	@Test
	void tokensIncreaseAcrossClientsWithAndWithoutTheQuarantine(RedisNodes nodes) {
		// the two acquire with different scripts (one reads the node's clock and marker
		// too): their tokens are one sequence all the same, from counters out of step
		Random random = new Random(7);
		for (int i = 0; i < nodes.size(); i++) {
			nodes.node(i).command("SET", "{fence}redlock:mixed", Integer.toString(random.nextInt(5_000)));
		}
		List<Long> tokens = new ArrayList<>();
		try (Redlock judged = TestSupport.redlock(nodes, settings(true));
				Redlock plain = TestSupport.redlock(nodes, settings(false))) {
			awaitReady(judged);
			for (int i = 0; i < 40; i++) {
				Redlock client = (i % 4 < 2) ? judged : plain;
				Lease lease = client.acquire(LockRequest.of("mixed", QUARANTINE).named("fencing").fenced(), WAIT);
				tokens.add(lease.fencingToken().orElseThrow());
				lease.release();
			}
		}
		assertThat(tokens).hasSize(40);
		assertThat(inversions(tokens)).isZero();
	}

	@ParameterizedTest(name = "quarantine {0}")
	@ValueSource(booleans = { false, true })
	void grantsThatCountAlikeNeedNoSecondRound(boolean quarantine, RedisNodes nodes) {
		String counter = "{fence}redlock:in-step";
		List<NodeRequestEvent> confirmations = new CopyOnWriteArrayList<>();
		RedlockListener listener = new RedlockListener() {
			@Override
			public void nodeRequestFinished(NodeRequestEvent event) {
				if (event.command() == NodeCommand.FENCE) {
					confirmations.add(event);
				}
			}
		};
		try (Redlock redlock = TestSupport.redlock(nodes, settings(quarantine), listener)) {
			awaitReady(redlock);
			Duration ttl = quarantine ? QUARANTINE : TTL;
			// fresh counters count alike; each lock waits until every node counted it
			// and deleted its key (the nodes not awaited do so just after the quorum),
			// so that every node grants the next
			for (long expected = 1; expected <= 5; expected++) {
				Lease lease = redlock.acquire(LockRequest.of("in-step", ttl).named("fencing").fenced(), WAIT);
				assertThat(lease.fencingToken()).hasValue(expected);
				assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
				long count = expected;
				TestSupport.awaitTrue("every node counted " + count + " and released", Duration.ofSeconds(5),
						() -> countedEverywhere(nodes, "in-step", count));
			}
			assertThat(confirmations).as("confirmation requests while the counters were in step").isEmpty();
			// out of step, no two grants count alike: the second round raises them
			staggerCounters(nodes, counter, 100);
			Lease lease = redlock.acquire(LockRequest.of("in-step", ttl).named("fencing").fenced(), WAIT);
			// the highest count of any quorum is at least the third node's
			assertThat(lease.fencingToken().orElseThrow()).isGreaterThanOrEqualTo(131);
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
			assertThat(confirmations.stream().filter((event) -> event.outcome() == NodeOutcome.OK))
				.as("confirmations of the token")
				.hasSizeGreaterThanOrEqualTo(3);
		}
	}

	/**
	 * Counters are written as whole numbers however high they get: Lua writes a number
	 * from 10^14 on as {@code 1e+14} by default, which would stop the count there (every
	 * later grant would read and write the same count) and break the counters'
	 * re-seeding.
	 */
	@ParameterizedTest(name = "quarantine {0}")
	@ValueSource(booleans = { false, true })
	void tokensKeepIncreasingPastTenToTheFourteenth(boolean quarantine, RedisNodes nodes) {
		String counter = "{fence}redlock:high";
		long high = 99_999_999_999_998L;
		try (Redlock redlock = TestSupport.redlock(nodes, settings(quarantine))) {
			awaitReady(redlock);
			Duration ttl = quarantine ? QUARANTINE : TTL;
			List<Long> tokens = new ArrayList<>();
			for (int i = 0; i < nodes.size(); i++) {
				nodes.node(i).command("SET", counter, Long.toString(high));
			}
			for (int i = 0; i < 3; i++) {
				tokens.add(fencedToken(redlock, nodes, "high", ttl));
			}
			// out of step: the second round raises the counters to the token
			staggerCounters(nodes, counter, high);
			for (int i = 0; i < 3; i++) {
				tokens.add(fencedToken(redlock, nodes, "high", ttl));
			}
			assertThat(tokens.subList(0, 3)).containsExactly(high + 1, high + 2, high + 3);
			assertThat(tokens.get(3)).isGreaterThanOrEqualTo(high + 30);
			assertThat(inversions(tokens)).isZero();
			for (int i = 0; i < nodes.size(); i++) {
				assertThat(nodes.node(i).command("GET", counter)).as("node %d's counter", i).matches("[0-9]+( .+)?");
			}
			if (quarantine) {
				// a node that forgot its counters gets them back as whole numbers too
				nodes.node(0).command("FLUSHALL");
				awaitReseeded(redlock, nodes.node(0), counter, high);
			}
		}
	}

	/**
	 * Takes fenced locks until the node's counter is back, re-seeded from the others: the
	 * rounds let the client see that the node forgot.
	 */
	private static void awaitReseeded(Redlock redlock, RedisNode node, String counter, long atLeast) {
		long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		String stored = node.command("GET", counter);
		while (stored == null || !stored.matches("[0-9]+ .+") || Long.parseLong(stored.split(" ")[0]) < atLeast) {
			assertThat(System.nanoTime() - deadline).as("node counter re-seeded, now %s", stored).isNegative();
			redlock.tryAcquire(LockRequest.of("reseed", QUARANTINE).named("fencing").fenced())
				.ifPresent(Lease::release);
			stored = node.command("GET", counter);
		}
	}

	/**
	 * Takes a fenced lock, releases it, and waits until no node holds its key (the nodes
	 * not awaited delete it just after the quorum), so that every node grants the next.
	 */
	private static long fencedToken(Redlock redlock, RedisNodes nodes, String resource, Duration ttl) {
		Lease lease = redlock.acquire(LockRequest.of(resource, ttl).named("fencing").fenced(), WAIT);
		long token = lease.fencingToken().orElseThrow();
		assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
		TestSupport.awaitTrue("the lock key is gone from every node", Duration.ofSeconds(5),
				() -> TestSupport.nodesWithKey(nodes, TestSupport.PREFIX + resource) == 0);
		return token;
	}

	/**
	 * The settings of the tests where no node is paused, with or without a quarantine.
	 */
	private RedlockSettings settings(boolean quarantine) {
		return quarantine ? TestSupport.withQuarantine(QUARANTINE).withRetryDelay(Duration.ofMillis(5)) : this.healthy;
	}

	/**
	 * Waits until the connections are open and, with a quarantine, every node counts and
	 * fenced locks are taken (fresh nodes take them once their counters are seeded).
	 */
	private static void awaitReady(Redlock redlock) {
		TestSupport.awaitWarmPools(redlock);
		if (!redlock.settings().restartQuarantine().isZero()) {
			ForgetfulNodes.awaitCounting(redlock);
			redlock.acquire(LockRequest.of("ready", QUARANTINE).named("fencing").fenced(), Duration.ofSeconds(10))
				.release();
		}
	}

	/**
	 * A store that refuses writes carrying a token lower than the highest it has seen.
	 */
	private static final class FencedStore {

		private long highestToken;

		private String value = "";

		synchronized boolean write(long token, String value) {
			if (token < this.highestToken) {
				return false;
			}
			this.highestToken = token;
			this.value = value;
			return true;
		}

		synchronized String value() {
			return this.value;
		}

	}

	/**
	 * Whether the node has the fencing scripts a lock calls: the acquisition's (with the
	 * quarantine or without) and the confirmation's.
	 */
	private static boolean fencingScriptsCached(RedisNode node, boolean quarantine) {
		LockScripts.Script acquire = quarantine ? LockScripts.ACQUIRE_FENCED : LockScripts.ACQUIRE_COUNTED;
		return "1\n1".equals(
				node.command("SCRIPT", "EXISTS", acquire.sha1().toString(), LockScripts.RAISE_FENCE.sha1().toString()));
	}

	/**
	 * Whether every node's counter of the resource has the count, and its key is gone.
	 */
	private static boolean countedEverywhere(RedisNodes nodes, String resource, long count) {
		String counter = "{fence}" + TestSupport.PREFIX + resource;
		return TestSupport.nodesWithKey(nodes, TestSupport.PREFIX + resource) == 0 && nodes.nodes()
			.stream()
			.allMatch((node) -> Long.toString(count).equals(node.command("GET", counter).split(" ")[0]));
	}

	/**
	 * Sets every node's counter to a count of its own above {@code floor}, so that no two
	 * grants count alike and a fenced lock needs its second round.
	 */
	private static void staggerCounters(RedisNodes nodes, String counter, long floor) {
		for (int i = 0; i < nodes.size(); i++) {
			nodes.node(i).command("SET", counter, Long.toString(floor + 10 * (i + 1)));
		}
	}

	/**
	 * Whether the node ran the fenced acquisition's script by digest and the release's,
	 * by digest too or by the native compare-and-delete where the server has one
	 * ({@code NativeCommandsTests}).
	 */
	private static boolean ranTheAcquisitionAndTheRelease(RedisNode node) {
		Map<String, Long> calls = NativeCommandsTests.commandCalls(node);
		long byDigest = calls.getOrDefault("evalsha", 0L);
		long natively = calls.getOrDefault("delex", 0L) + calls.getOrDefault("delifeq", 0L);
		return byDigest >= 1 && byDigest + natively == 2;
	}

	private static String commandStats(RedisNode node) {
		return node.command("INFO", "commandstats");
	}

	private static long inversions(List<Long> tokens) {
		long inversions = 0;
		for (int i = 1; i < tokens.size(); i++) {
			if (tokens.get(i) <= tokens.get(i - 1)) {
				inversions++;
			}
		}
		return inversions;
	}

	private static int nodeWithHighestCounter(RedisNodes nodes) {
		int highest = 0;
		for (int i = 1; i < nodes.size(); i++) {
			if (counter(nodes, i) > counter(nodes, highest)) {
				highest = i;
			}
		}
		return highest;
	}

	/**
	 * A node's counter: its count, before the generation a node with a marker records.
	 */
	private static long counter(RedisNodes nodes, int node) {
		return Long.parseLong(nodes.node(node).command("GET", COUNTER).split(" ")[0]);
	}

	/** {@code count} distinct random nodes of five, other than the given one. */
	private static Set<Integer> othersThan(int node, int count, Random random) {
		Set<Integer> others = new TreeSet<>();
		while (others.size() < count) {
			int candidate = random.nextInt(5);
			if (candidate != node) {
				others.add(candidate);
			}
		}
		return others;
	}

	/** {@code count} distinct random nodes among the first {@code of}. */
	private static Set<Integer> randomNodes(Random random, int of, int count) {
		Set<Integer> chosen = new TreeSet<>();
		while (chosen.size() < count) {
			chosen.add(random.nextInt(of));
		}
		return chosen;
	}

	private static void pauseExactly(RedisNodes nodes, Set<Integer> paused, Set<Integer> down) {
		for (int i = 0; i < nodes.size(); i++) {
			RedisNode node = nodes.node(i);
			if (!node.isRunning()) {
				continue;
			}
			if (down.contains(i) && paused.add(i)) {
				node.pause();
			}
			else if (!down.contains(i) && paused.remove(i)) {
				node.resume();
			}
		}
	}

	private static void resumeAll(RedisNodes nodes, Set<Integer> paused) {
		for (int i : paused) {
			if (nodes.node(i).isRunning()) {
				nodes.node(i).resume();
			}
		}
		paused.clear();
	}

}
