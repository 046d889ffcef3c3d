package dev.redlock.core;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where a node has native commands for the lock's compare-and-delete and
 * compare-and-extend (Redis 8.4+: {@code DELEX}, Valkey 9: {@code DELIFEQ}; both
 * {@code SET … IFEQ … GET}), releases and extensions use them and run no script; older
 * servers run the scripts; a quorum of both kinds locks as one; a node that refuses a
 * native command falls back to the scripts alone and loses no lock. What reached each
 * node is read from {@code INFO commandstats}. Needs the servers
 * {@code redlock-test/servers.sh} prepares (the Maven profile {@code newer-servers} turns
 * on where they are).
 */
@Tag("newer-servers")
class NativeCommandsTests {

	private static final Duration TTL = Duration.ofSeconds(10);

	@ParameterizedTest
	@ValueSource(strings = { "valkey-9.1", "redis-8.6" })
	void releasesAndExtensionsRunNoScriptWhereTheServerHasTheCommands(String server) {
		Path binary = RedisNodes.preparedServer(server);
		String delete = server.startsWith("valkey") ? "delifeq" : "delex";
		try (RedisNodes nodes = RedisNodes.startServers(List.of(binary, binary, binary));
				Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS)) {
			TestSupport.awaitWarmPools(redlock);
			lockExtendAndRelease(redlock);
			awaitLockCommands(redlock, delete);
			for (RedisNode node : nodes.nodes()) {
				// two releases; two acquisitions and the extension (more on a node where
				// an attempt ran out of time and its value was removed). A round returns
				// once a quorum answered: the last node's commands may still be on their
				// way
				awaitCalls(node, Map.of(delete, 2L, "set", 3L, "publish", 1L));
				assertThat(commandCalls(node)).as("commands on %s", server).doesNotContainKeys("evalsha", "eval");
			}
			TestSupport.awaitNoKeys(nodes);
		}
	}

	@Test
	void olderServersRunTheScripts() {
		Path embedded = RedisNodes.embeddedServer();
		try (RedisNodes nodes = RedisNodes.startServers(List.of(embedded, embedded, embedded));
				Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS)) {
			TestSupport.awaitWarmPools(redlock);
			lockExtendAndRelease(redlock);
			awaitLockCommands(redlock, "scripts");
			for (RedisNode node : nodes.nodes()) {
				// two releases and the extension
				awaitCalls(node, Map.of("evalsha", 3L));
				assertThat(commandCalls(node)).doesNotContainKeys("delex", "delifeq");
			}
		}
	}

	@Test
	void aQuorumOfDifferentServersKeepsOneHolderAtATime() throws Exception {
		Path embedded = RedisNodes.embeddedServer();
		Path onPath = RedisNodes.serverOnPath();
		List<Path> servers = List.of(embedded, (onPath != null) ? onPath : embedded,
				RedisNodes.preparedServer("valkey-8.0"), RedisNodes.preparedServer("valkey-9.1"),
				RedisNodes.preparedServer("redis-8.6"));
		try (RedisNodes nodes = RedisNodes.startServers(servers)) {
			MutualExclusionTests.assertAtMostOneHolder(nodes);
			assertThat(commandCalls(nodes.node(0))).containsKey("evalsha").doesNotContainKey("delex");
			assertThat(commandCalls(nodes.node(2))).containsKey("evalsha").doesNotContainKey("delifeq");
			assertThat(commandCalls(nodes.node(3))).containsKey("delifeq").doesNotContainKey("evalsha");
			assertThat(commandCalls(nodes.node(4))).containsKey("delex").doesNotContainKey("evalsha");
		}
	}

	@Test
	void aNodeThatRefusesANativeCommandRunsTheScriptsAloneAndLosesNoLock() {
		Path binary = RedisNodes.preparedServer("redis-8.6");
		try (RedisNodes nodes = RedisNodes.startServers(List.of(binary, binary, binary));
				Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS)) {
			TestSupport.awaitWarmPools(redlock);
			// found at the greeting, refused since: as behind a proxy or a changed ACL
			nodes.node(0).command("ACL", "SETUSER", "default", "-delex");
			for (int round = 0; round < 3; round++) {
				Lease lease = redlock.acquire("refused", TTL, Duration.ofSeconds(5));
				assertThat(lease.extend()).isTrue();
				assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
				assertThat(TestSupport.keysOnNodes(nodes)).isZero();
			}
			assertThat(redlock.checkNodes()).extracting(NodeStatus::lockCommands)
				.containsExactly("scripts", "delex", "delex");
			Map<String, Long> refusing = commandCalls(nodes.node(0));
			assertThat(refusing).containsKey("evalsha");
			assertThat(commandCalls(nodes.node(1))).containsKey("delex").doesNotContainKeys("evalsha", "eval");
			assertThat(commandCalls(nodes.node(2))).containsKey("delex").doesNotContainKeys("evalsha", "eval");
		}
	}

	/** Two leases, one extended, each released. */
	private static void lockExtendAndRelease(Redlock redlock) {
		Lease lease = redlock.acquire("native", TTL, Duration.ofSeconds(5));
		assertThat(lease.extend(Duration.ofSeconds(20))).isTrue();
		assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
		Lease again = redlock.acquire("native", TTL, Duration.ofSeconds(5));
		assertThat(again.release()).isEqualTo(ReleaseOutcome.RELEASED);
	}

	/**
	 * Waits until every node says what its releases and extensions run: a node whose
	 * {@code INFO} is late (a loaded machine) shows none in that check.
	 */
	private static void awaitLockCommands(Redlock redlock, String expected) {
		TestSupport.awaitTrue("every node running " + expected, Duration.ofSeconds(10),
				() -> redlock.checkNodes().stream().allMatch((status) -> expected.equals(status.lockCommands())),
				() -> redlock.checkNodes().stream().map(NodeStatus::lockCommands).toList().toString());
	}

	/** Waits until a node has served at least so many calls of each command. */
	private static void awaitCalls(RedisNode node, Map<String, Long> atLeast) {
		TestSupport.awaitTrue("calls " + atLeast + " on " + node.uri(), Duration.ofSeconds(10), () -> {
			Map<String, Long> calls = commandCalls(node);
			return atLeast.entrySet()
				.stream()
				.allMatch((wanted) -> calls.getOrDefault(wanted.getKey(), 0L) >= wanted.getValue());
		}, () -> commandCalls(node).toString());
	}

	/** Calls per command since the node started, from {@code INFO commandstats}. */
	static Map<String, Long> commandCalls(RedisNode node) {
		Map<String, Long> calls = new HashMap<>();
		node.commandStats().forEach((command, stat) -> calls.put(command, stat.calls()));
		return calls;
	}

}
