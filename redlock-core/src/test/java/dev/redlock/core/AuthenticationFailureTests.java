package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A node that refuses our credentials is a minority fault like a node that is down,
 * reported as an authentication failure, never with the password; refused by a quorum's
 * worth of nodes, it is a configuration error.
 */
@WithRedisNodes(count = 5)
class AuthenticationFailureTests {

	private static final String PASSWORD = "Locker-pw-7781";

	private static final String WRONG = "Wrong-pw-4410";

	/**
	 * The defaults, restart quarantine on, with the shared test node timeout: on a busy
	 * machine a healthy node's first answer can take longer than 100 ms.
	 */
	private static final RedlockSettings DEFAULTS = RedlockSettings.defaults()
		.withNodeTimeout(TestSupport.SETTINGS.nodeTimeout());

	private RedisNodes nodes;

	@AfterEach
	void dropUsers() {
		TestSupport.dropAclUser(this.nodes);
	}

	@Test
	void oneNodeOfFiveRefusingOurPasswordIsAWarningAndLocksWorkOnTheOthers(RedisNodes nodes) {
		List<String> uris = urisWithWrongPasswords(nodes, 1);
		// the restart quarantine on, as by default: the node is not mistaken for one that
		// refuses INFO
		try (Redlock checked = Redlock.builder().nodes(uris).settings(DEFAULTS).build()) {
			List<NodeFinding> findings = checked.verifyNodes();
			assertThat(findings).noneMatch((finding) -> finding.severity() == NodeFinding.Severity.ERROR);
			assertThat(findings).filteredOn((finding) -> Integer.valueOf(4).equals(finding.node()))
				.singleElement()
				.satisfies((finding) -> assertThat(finding.message()).contains("refuses our credentials", "WRONGPASS")
					.doesNotContain("INFO", WRONG, PASSWORD));
		}
		// the quarantine off: the kit's nodes were started moments ago
		try (Redlock redlock = Redlock.builder().nodes(uris).settings(TestSupport.SETTINGS).build()) {
			try (Lease lease = redlock.acquire("auth", Duration.ofSeconds(5), Duration.ZERO)) {
				assertThat(lease.isValid()).isTrue();
				assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
			}
			// a check opens a connection where none is open and does not wait for the
			// first connections: looked at until the node has answered
			NodeStatus status = awaitAnswered(redlock, 4);
			assertThat(status.reachable()).isFalse();
			assertThat(status.error()).contains("authentication failed", "WRONGPASS").doesNotContain(WRONG, PASSWORD);
		}
	}

	@Test
	void aQuorumsWorthOfNodesRefusingOurPasswordsIsAnErrorNamingThem(RedisNodes nodes) {
		try (Redlock redlock = Redlock.builder().nodes(urisWithWrongPasswords(nodes, 3)).settings(DEFAULTS).build()) {
			assertThat(redlock.verifyNodes()).filteredOn((finding) -> finding.severity() == NodeFinding.Severity.ERROR)
				.singleElement()
				.satisfies((finding) -> assertThat(finding.message())
					.contains("3 of 5 nodes refuse our credentials", "nodes[2]", "nodes[3]", "nodes[4]", "WRONGPASS")
					.doesNotContain("nodes[1]", WRONG, PASSWORD));
		}
	}

	@Test
	void aNodeThatWantsAPasswordWeDoNotGiveIsAnAuthenticationFailureToo(RedisNodes nodes) {
		this.nodes = nodes;
		TestSupport.createAclUser(nodes, PASSWORD, "~*", "+@all");
		nodes.node(0).command("ACL", "SETUSER", "default", "resetpass", ">" + PASSWORD);
		try (Redlock redlock = Redlock.builder().nodes(nodes.uris()).settings(TestSupport.SETTINGS).build()) {
			assertThat(awaitAnswered(redlock, 0).error()).contains("authentication failed", "NOAUTH");
		}
		finally {
			// the kit talks to its nodes without a password: give it a fresh node
			nodes.node(0).restart();
		}
	}

	@Test
	void aPasswordWithReservedCharactersIsGivenPercentEncodedInTheUri(RedisNodes nodes) {
		this.nodes = nodes;
		String password = "p@ss:w/rd#1%?";
		TestSupport.createAclUser(nodes, password, "~*", "+@all");
		String encoded = "p%40ss%3Aw%2Frd%231%25%3F";
		List<String> uris = nodes.nodes()
			.stream()
			.map((node) -> "redis://locker:" + encoded + "@" + node.host() + ":" + node.port())
			.toList();
		try (Redlock redlock = Redlock.builder().nodes(uris).settings(TestSupport.SETTINGS).build()) {
			assertThat(redlock.verifyNodes()).noneMatch((finding) -> finding.severity() == NodeFinding.Severity.ERROR);
			try (Lease lease = redlock.acquire("encoded", Duration.ofSeconds(5), Duration.ZERO)) {
				assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
			}
			assertThat(redlock.nodeAddresses()).noneMatch((address) -> address.contains("ss") || address.contains("%"));
		}
	}

	/**
	 * Checks the nodes until the given node has answered, even if only to refuse us: not
	 * a timeout of a connection still being opened on a busy machine.
	 */
	private static NodeStatus awaitAnswered(Redlock redlock, int node) {
		AtomicReference<NodeStatus> status = new AtomicReference<>();
		TestSupport.awaitTrue("node " + node + " answered a check", Duration.ofSeconds(5), () -> {
			status.set(redlock.checkNodes().get(node));
			return status.get().reachable() || String.valueOf(status.get().error()).contains("authentication failed");
		});
		return status.get();
	}

	/**
	 * The first nodes with the right password, the last {@code wrong} nodes with a wrong
	 * one.
	 */
	private List<String> urisWithWrongPasswords(RedisNodes nodes, int wrong) {
		this.nodes = nodes;
		TestSupport.createAclUser(nodes, PASSWORD, "~*", "+@all");
		List<String> uris = new ArrayList<>();
		for (int i = 0; i < nodes.size(); i++) {
			RedisNode node = nodes.node(i);
			String password = (i < nodes.size() - wrong) ? PASSWORD : WRONG;
			uris.add("redis://locker:" + password + "@" + node.host() + ":" + node.port());
		}
		return uris;
	}

}
