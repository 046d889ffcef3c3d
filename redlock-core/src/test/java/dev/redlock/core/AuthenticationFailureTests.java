package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

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
		try (Redlock checked = Redlock.builder().nodes(uris).settings(RedlockSettings.defaults()).build()) {
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
			NodeStatus status = redlock.checkNodes().get(4);
			assertThat(status.reachable()).isFalse();
			assertThat(status.error()).contains("authentication failed", "WRONGPASS").doesNotContain(WRONG, PASSWORD);
		}
	}

	@Test
	void aQuorumsWorthOfNodesRefusingOurPasswordsIsAnErrorNamingThem(RedisNodes nodes) {
		try (Redlock redlock = Redlock.builder()
			.nodes(urisWithWrongPasswords(nodes, 3))
			.settings(RedlockSettings.defaults())
			.build()) {
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
			assertThat(redlock.checkNodes().get(0).error()).contains("authentication failed", "NOAUTH");
		}
		finally {
			// the kit talks to its nodes without a password: give it a fresh node
			nodes.node(0).restart();
		}
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
