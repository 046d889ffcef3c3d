package dev.redlock.core;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.redlock.core.TestThreads.Running;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ACL recipe of {@code docs/operations.md} without {@code @scripting}: on servers
 * with the native commands, a plain lock is taken, extended, renewed and released, and a
 * waiter is woken by the release notice, by a user who may run no script, with the
 * restart quarantine off (it writes each node's marker with a script). On a server
 * without them, or with the quarantine on, the same user is a startup error naming the
 * node and the missing permission.
 */
@Tag("newer-servers")
class ScriptFreeAclTests {

	private static final String PASSWORD = "pw-No-Scripts-1";

	/** Far above the time a release notice takes, far below a poll. */
	private static final Duration WELL_BEFORE_A_POLL = Duration.ofSeconds(3);

	/** The restart quarantine off: its markers are written by a script. */
	private static final RedlockSettings SETTINGS = TestSupport.SETTINGS.withRetryDelay(Duration.ofSeconds(20));

	/** The recipe: the rules every server takes, then its native compare-and-delete. */
	static List<String> recipe(String compareAndDelete) {
		return List.of("resetkeys", "~redlock:*", "%R~{fence}", "resetchannels", "&redlock-released:*", "-@all",
				"+@connection", "+set", "+get", "+publish", "+subscribe", "+unsubscribe", "+time", "+info",
				"+command|info", "+" + compareAndDelete);
	}

	@ParameterizedTest
	@ValueSource(strings = { "valkey-9.1:delifeq", "redis-8.6:delex" })
	void aUserWhoMayRunNoScriptLocksWhereTheServerHasTheCommands(String serverAndCommand) throws Exception {
		String[] parts = serverAndCommand.split(":");
		Path binary = RedisNodes.preparedServer(parts[0]);
		try (RedisNodes nodes = RedisNodes.startServers(List.of(binary, binary, binary))) {
			TestSupport.createAclUser(nodes, PASSWORD, recipe(parts[1]).toArray(String[]::new));
			try (Redlock holder = loggingIn(nodes); Redlock waiter = loggingIn(nodes)) {
				assertThat(holder.verifyNodes())
					.noneMatch((finding) -> finding.severity() == NodeFinding.Severity.ERROR);
				Lease lease = holder.acquire("scriptless", Duration.ofSeconds(2), Duration.ofSeconds(5));
				assertThat(lease.extend()).isTrue();
				lease.autoRenew();
				TestSupport.awaitTrue("two renewals", Duration.ofSeconds(10), () -> lease.extensionAttempts() >= 3);
				assertThat(lease.isValid()).isTrue();
				Running<Lease> waiting = TestThreads.start(false,
						() -> waiter.acquire("scriptless", Duration.ofSeconds(5), Duration.ofSeconds(30)));
				TestSupport.awaitSubscribed(nodes, "scriptless", 1);
				assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
				assertThat(waiting.await(WELL_BEFORE_A_POLL).release()).isEqualTo(ReleaseOutcome.RELEASED);
			}
			for (RedisNode node : nodes.nodes()) {
				assertThat(node.commandStats()).doesNotContainKeys("evalsha", "eval");
			}
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "valkey-9.1:delifeq", "redis-8.6:delex" })
	void withoutTheCommandsTheSameUserIsAStartupErrorNamingTheNode(String serverAndCommand) {
		Path embedded = RedisNodes.embeddedServer();
		try (RedisNodes nodes = RedisNodes.startServers(List.of(embedded, embedded, embedded))) {
			// Redis 6.2 knows neither command, nor read-only key patterns: the recipe
			// without them
			List<String> rules = new ArrayList<>(recipe("get"));
			rules.set(rules.indexOf("%R~{fence}"), "~{fence}");
			TestSupport.createAclUser(nodes, PASSWORD, rules.toArray(String[]::new));
			try (Redlock redlock = loggingIn(nodes)) {
				List<NodeFinding> errors = redlock.verifyNodes()
					.stream()
					.filter((finding) -> finding.severity() == NodeFinding.Severity.ERROR)
					.toList();
				assertThat(errors).hasSize(nodes.size());
				for (int i = 0; i < nodes.size(); i++) {
					NodeFinding finding = errors.get(i);
					assertThat(finding.node()).isEqualTo(i);
					assertThat(finding.message()).contains(nodes.node(i).host() + ":" + nodes.node(i).port())
						.contains("+@scripting")
						.contains("DELEX")
						.doesNotContain(PASSWORD);
				}
			}
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "valkey-9.1:delifeq", "redis-8.6:delex" })
	void withTheRestartQuarantineOnTheSameUserIsAStartupErrorNamingTheNode(String serverAndCommand) {
		String[] parts = serverAndCommand.split(":");
		Path binary = RedisNodes.preparedServer(parts[0]);
		try (RedisNodes nodes = RedisNodes.startServers(List.of(binary, binary, binary))) {
			TestSupport.createAclUser(nodes, PASSWORD, recipe(parts[1]).toArray(String[]::new));
			try (Redlock redlock = loggingIn(nodes, TestSupport.withQuarantine(Duration.ofSeconds(5)))) {
				assertThat(redlock.verifyNodes())
					.filteredOn((finding) -> finding.severity() == NodeFinding.Severity.ERROR)
					.hasSize(nodes.size())
					.allSatisfy((finding) -> assertThat(finding.message()).contains("restart quarantine")
						.contains("+@scripting")
						.doesNotContain(PASSWORD));
			}
		}
	}

	private static Redlock loggingIn(RedisNodes nodes) {
		return loggingIn(nodes, SETTINGS);
	}

	private static Redlock loggingIn(RedisNodes nodes, RedlockSettings settings) {
		return TestSupport.loggingInAs(nodes, TestSupport.ACL_USER + ":" + PASSWORD, settings);
	}

}
