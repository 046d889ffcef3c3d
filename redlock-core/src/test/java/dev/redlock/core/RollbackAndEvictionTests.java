package dev.redlock.core;

import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * One node of A's bare quorum drops A's key while it keeps running, its clock untouched
 * and its marker kept: it goes back to a data set saved before A locked
 * ({@code DEBUG RELOAD NOSAVE}, with neither a new {@code run_id} nor a short uptime;
 * alone, as an operator runs it, or with the connections broken, as a restored snapshot
 * or a restart from an older dump breaks them), or it evicts A's key under memory
 * pressure ({@code volatile-lru} evicts only keys with a TTL: locks, never the marker,
 * which has none), configured for it before A locks or only while A holds. A holds its
 * lock on nodes 0, 1 and 2 only (its {@code SET} never reached 3 and 4); B, warm (built
 * before the fault) or brand new (built after it), must get no lock while A's lease is
 * valid. A node configured to evict counts for no holder. What leaves the connections
 * open is seen by a warm client at its next probe, within a probe period (the documented
 * window); the rest at once. Each failing row gave B a second holder on the code before
 * these guards (seen failing). No fake clock: runs on whichever backend the kit picks,
 * its nodes started to accept {@code DEBUG}.
 */
class RollbackAndEvictionTests {

	private static final Duration QUARANTINE = Duration.ofSeconds(3);

	private static final RedlockSettings SETTINGS = TestSupport.withQuarantine(QUARANTINE);

	/** How long B keeps trying, at most; it stops when A's lease ends. */
	private static final Duration TRYING = Duration.ofSeconds(1);

	/** Memory above what the node used when told to evict: room for 16 fillers. */
	private static final long HEADROOM_BYTES = 4L << 20;

	private static final String FILLER_PREFIX = "filler:";

	/** A filler's value, 256 KiB. */
	private static final String FILLER = "f".repeat(256 << 10);

	private static RedisNodes nodes;

	@BeforeAll
	static void startNodes() {
		nodes = RedisNodes.startWithDebugCommand(5);
		ForgetfulNodes.awaitNodesUpFor(nodes, QUARANTINE.plusSeconds(1));
	}

	@AfterAll
	static void stopNodes() {
		nodes.close();
	}

	@AfterEach
	void stopEvicting() {
		RedisNode node = nodes.node(2);
		node.command("CONFIG", "SET", "maxmemory", "0");
		node.command("CONFIG", "SET", "maxmemory-policy", "noeviction");
		node.command("EVAL", "for _, key in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', key) end", "0",
				FILLER_PREFIX + "*");
	}

	/**
	 * A reload that leaves the connections open ({@code DEBUG RELOAD}, an operator's
	 * command): a warm client's rounds see nothing of it, its next probe does (the node
	 * shows a call of {@code DEBUG} since its marker was written), within a probe period.
	 */
	@Test
	void aReloadOfAnOlderDataSetGivesNoSecondHolderToAWarmClientOnceItsProbeHasRead() {
		String resource = "reload-warm";
		try (ForgetfulNodes scenario = new ForgetfulNodes(nodes, nodes.uris(), SETTINGS);
				Redlock warm = TestSupport.redlock(nodes, SETTINGS)) {
			ForgetfulNodes.awaitCounting(scenario.holder(), warm);
			nodes.node(2).saveSnapshot();
			Lease first = scenario.acquiredOnNodes012(resource);
			reloadOlderDataSet(first, resource);

			ForgetfulNodes.awaitProbed(warm, 2);
			assertThat(warm.checkNodes().get(2).quarantineReason()).isEqualTo(QuarantineReason.ROLLBACK);
			assertThat(ForgetfulNodes.refusedWhileValid(first, warm, resource, TRYING)).isPositive();
			first.release();
		}
	}

	/**
	 * A rollback as a restored snapshot or a restart from an older dump makes it: the
	 * connections break with it, and the warm client's new ones see the reload at once.
	 */
	@Test
	void aReloadThatBreaksTheConnectionsGivesNoSecondHolderToAWarmClientAtOnce() {
		String resource = "reload-restore-warm";
		try (ForgetfulNodes scenario = new ForgetfulNodes(nodes, nodes.uris(), SETTINGS);
				Redlock warm = TestSupport.redlock(nodes, SETTINGS)) {
			ForgetfulNodes.awaitCounting(scenario.holder(), warm);
			nodes.node(2).saveSnapshot();
			Lease first = scenario.acquiredOnNodes012(resource);
			reloadOlderDataSet(first, resource);
			nodes.node(2).command("CLIENT", "KILL", "TYPE", "normal");

			assertThat(ForgetfulNodes.refusedWhileValid(first, warm, resource, TRYING)).isPositive();
			first.release();
		}
	}

	@Test
	void aReloadOfAnOlderDataSetGivesNoSecondHolderToABrandNewClient() {
		String resource = "reload-new";
		try (ForgetfulNodes scenario = new ForgetfulNodes(nodes, nodes.uris(), SETTINGS)) {
			ForgetfulNodes.awaitCounting(scenario.holder());
			nodes.node(2).saveSnapshot();
			Lease first = scenario.acquiredOnNodes012(resource);
			reloadOlderDataSet(first, resource);

			ForgetfulNodes.assertNewClientRefusedWhileValid(first, nodes, SETTINGS, resource, TRYING);
			first.release();
		}
	}

	/**
	 * Deliberate control, not a gap: with the restart quarantine off every guard against
	 * forgetful nodes is off, and the reload gives B the lock while A's lease is valid.
	 * It shows that {@link ForgetfulNodes#refusedWhileValid} can fail in this very
	 * scenario.
	 */
	@Test
	void withEveryGuardOffAReloadDoesGiveASecondHolder() {
		String resource = "reload-guards-off";
		RedlockSettings guardsOff = TestSupport.SETTINGS.withDefaultTtl(QUARANTINE);
		assertThat(guardsOff.restartQuarantine()).isEqualTo(Duration.ofSeconds(0));
		try (ForgetfulNodes scenario = new ForgetfulNodes(nodes, nodes.uris(), guardsOff)) {
			nodes.node(2).saveSnapshot();
			Lease first = scenario.acquiredOnNodes012(resource);
			reloadOlderDataSet(first, resource);

			try (Redlock b = TestSupport.redlock(nodes, guardsOff)) {
				assertThatThrownBy(() -> ForgetfulNodes.refusedWhileValid(first, b, resource, TRYING))
					.isInstanceOf(AssertionError.class)
					.hasMessageContaining("a second holder while the first is valid");
			}
			first.release();
		}
	}

	/**
	 * A node that may evict keys counts for no holder: A, which needs it, is refused, and
	 * its evictions can drop no lease.
	 */
	@Test
	void aNodeSetToEvictCountsForNoHolder() {
		String resource = "already-evicting";
		evictKeysWithATtl(nodes.node(2));
		try (ForgetfulNodes scenario = new ForgetfulNodes(nodes, nodes.uris(), SETTINGS)) {
			TestSupport.awaitTrue("A sees node 2 may evict", QUARANTINE.plusSeconds(5),
					() -> scenario.holder().checkNodes().get(2).quarantineReason() == QuarantineReason.EVICTION);
			scenario.assertHolderRefused(resource, TRYING);
		}
	}

	/**
	 * A node set to evict while A holds: a warm client sees it at its next probe (the
	 * policy, and the keys it evicted since its marker was written).
	 */
	@Test
	void anEvictionOnANodeSetToEvictWhileAHoldsGivesNoSecondHolderToAWarmClientOnceItsProbeHasRead() {
		String resource = "evicting-since-a-locked-warm";
		try (ForgetfulNodes scenario = new ForgetfulNodes(nodes, nodes.uris(), SETTINGS);
				Redlock warm = TestSupport.redlock(nodes, SETTINGS)) {
			ForgetfulNodes.awaitCounting(scenario.holder(), warm);
			Lease first = scenario.acquiredOnNodes012(resource);
			evictKeysWithATtl(nodes.node(2));
			fillUntilEvicted(first, resource);
			ForgetfulNodes.awaitProbed(warm, 2);

			assertThat(ForgetfulNodes.refusedWhileValid(first, warm, resource, TRYING)).isPositive();
			first.release();
		}
	}

	@Test
	void anEvictionOnANodeSetToEvictWhileAHoldsGivesNoSecondHolderToABrandNewClient() {
		String resource = "evicting-since-a-locked-new";
		try (ForgetfulNodes scenario = new ForgetfulNodes(nodes, nodes.uris(), SETTINGS)) {
			ForgetfulNodes.awaitCounting(scenario.holder());
			Lease first = scenario.acquiredOnNodes012(resource);
			evictKeysWithATtl(nodes.node(2));
			fillUntilEvicted(first, resource);

			ForgetfulNodes.assertNewClientRefusedWhileValid(first, nodes, SETTINGS, resource, TRYING);
			first.release();
		}
	}

	/**
	 * Takes node 2 back to the data set it saved before A locked, and checks that A's key
	 * is gone from it.
	 */
	private static void reloadOlderDataSet(Lease first, String resource) {
		RedisNode node = nodes.node(2);
		node.reloadSnapshot();
		ForgetfulNodes.assertGoneBeforeLeaseEnds(node, first, resource);
	}

	/**
	 * Makes a node evict keys with a TTL, least recently used first, once it uses
	 * {@link #HEADROOM_BYTES} more memory than now.
	 */
	private static void evictKeysWithATtl(RedisNode node) {
		long used = -1;
		for (String line : String.valueOf(node.command("INFO", "memory")).split("\r?\n")) {
			if (line.startsWith("used_memory:")) {
				used = Long.parseLong(line.substring("used_memory:".length()).trim());
			}
		}
		assertThat(used).as("used_memory of %s", node).isPositive();
		node.command("CONFIG", "SET", "maxmemory-policy", "volatile-lru");
		node.command("CONFIG", "SET", "maxmemory", String.valueOf(used + HEADROOM_BYTES));
	}

	/**
	 * Writes fillers with a TTL to node 2 until it has evicted A's key; fails if A's
	 * lease ends first.
	 */
	private static void fillUntilEvicted(Lease first, String resource) {
		RedisNode node = nodes.node(2);
		String key = TestSupport.PREFIX + resource;
		int written = 0;
		while ("1".equals(node.command("EXISTS", key))) {
			assertThat(first.isValid()).as("A's key evicted after %d fillers, while A's lease is valid", written)
				.isTrue();
			node.command("SET", FILLER_PREFIX + written++, FILLER, "PX", "60000");
		}
		assertThat(first.isValid()).as("A's key evicted after %d fillers, while A's lease is valid", written).isTrue();
	}

}
