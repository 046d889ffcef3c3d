package dev.redlock.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Passwords and ACL users from the node URIs are used, and never shown.
 */
@WithRedisNodes(count = 3)
class CredentialsTests {

	private static final String PASSWORD = "hunter2-Pa55";

	private RedisNodes nodes;

	@AfterEach
	void forgetPasswords() {
		// the kit talks to the nodes without credentials: give it fresh ones
		for (RedisNode node : this.nodes.nodes()) {
			node.restart();
		}
	}

	@Test
	void passwordFromTheUriIsUsed(RedisNodes nodes) {
		this.nodes = nodes;
		for (RedisNode node : nodes.nodes()) {
			node.command("CONFIG", "SET", "requirepass", PASSWORD);
		}
		List<String> uris = nodes.nodes()
			.stream()
			.map((node) -> "redis://:" + PASSWORD + "@" + node.host() + ":" + node.port())
			.toList();
		try (Redlock redlock = Redlock.builder().nodes(uris).settings(TestSupport.SETTINGS).build()) {
			try (Lease lease = redlock.acquire("secret", Duration.ofSeconds(5), Duration.ZERO)) {
				assertThat(lease.isValid()).isTrue();
			}
			assertThat(redlock.toString()).doesNotContain(PASSWORD);
		}
	}

	@Test
	void aclUserFromTheUriIsUsed(RedisNodes nodes) {
		this.nodes = nodes;
		for (RedisNode node : nodes.nodes()) {
			node.command("ACL", "SETUSER", "locker", "on", ">" + PASSWORD, "~redlock:*", "+@all");
		}
		List<String> uris = nodes.nodes()
			.stream()
			.map((node) -> "redis://locker:" + PASSWORD + "@" + node.host() + ":" + node.port())
			.toList();
		try (Redlock redlock = Redlock.builder().nodes(uris).settings(TestSupport.SETTINGS).build()) {
			try (Lease lease = redlock.acquire("acl", Duration.ofSeconds(5), Duration.ZERO)) {
				assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
			}
		}
	}

	@Test
	void wrongPasswordFailsNamingTheNodesButNotThePassword(RedisNodes nodes) {
		this.nodes = nodes;
		for (RedisNode node : nodes.nodes()) {
			node.command("CONFIG", "SET", "requirepass", PASSWORD);
		}
		String wrong = "Tr0ub4dor-and-3";
		List<String> uris = nodes.nodes()
			.stream()
			.map((node) -> "redis://:" + wrong + "@" + node.host() + ":" + node.port())
			.toList();
		try (Redlock redlock = Redlock.builder().nodes(uris).settings(TestSupport.SETTINGS).build()) {
			assertThatExceptionOfType(LockNotAcquiredException.class)
				.isThrownBy(() -> redlock.acquire("secret", Duration.ofSeconds(5), Duration.ZERO))
				.satisfies((ex) -> {
					assertThat(ex.reason()).isEqualTo(LockNotAcquiredException.Reason.NO_QUORUM);
					assertThat(ex.failedNodes()).hasSize(3);
					assertThat(ex.getMessage()).contains(nodes.node(0).uri()).doesNotContain(wrong, PASSWORD);
					assertThat(ex.getMessage().toUpperCase()).contains("WRONGPASS");
				});
		}
	}

}
