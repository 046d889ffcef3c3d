package dev.redlock.core;

import java.time.Duration;

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
		requirePassword(nodes);
		try (Redlock redlock = loggingInAs(nodes, ":" + PASSWORD)) {
			try (Lease lease = redlock.acquire("secret", Duration.ofSeconds(5), Duration.ZERO)) {
				assertThat(lease.isValid()).isTrue();
			}
			assertThat(redlock.toString()).doesNotContain(PASSWORD);
		}
	}

	@Test
	void aclUserFromTheUriIsUsed(RedisNodes nodes) {
		this.nodes = nodes;
		TestSupport.createAclUser(nodes, PASSWORD, "~redlock:*", "+@all");
		try (Redlock redlock = loggingInAs(nodes, TestSupport.ACL_USER + ":" + PASSWORD)) {
			try (Lease lease = redlock.acquire("acl", Duration.ofSeconds(5), Duration.ZERO)) {
				assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
			}
		}
	}

	/**
	 * An ACL user who may not read the fencing counters ({@code ~{fence}*} missing) takes
	 * plain locks, and gets no fenced one: each node's refusal is named, and the lock key
	 * its {@code SET} wrote before the counter's read was refused does not stay.
	 */
	@Test
	void aclUserWithoutTheCountersIsToldWhyAndLeavesNoKey(RedisNodes nodes) {
		this.nodes = nodes;
		TestSupport.createAclUser(nodes, PASSWORD, "~redlock:*", "+@all");
		try (Redlock redlock = loggingInAs(nodes, TestSupport.ACL_USER + ":" + PASSWORD)) {
			LockNotAcquiredException refused = assertThatExceptionOfType(LockNotAcquiredException.class).isThrownBy(
					() -> redlock.acquire(LockRequest.of("no-counters", Duration.ofSeconds(5)).fenced(), Duration.ZERO))
				.actual();
			assertThat(refused.failedNodes()).hasSize(nodes.size()).allMatch((failure) -> failure.contains("NOPERM"));
			TestSupport.awaitTrue("the lock key is gone from every node", Duration.ofSeconds(5),
					() -> TestSupport.nodesWithKey(nodes, TestSupport.PREFIX + "no-counters") == 0);
			assertThat(redlock.acquire("no-counters", Duration.ofSeconds(5), Duration.ZERO).release())
				.isEqualTo(ReleaseOutcome.RELEASED);
		}
	}

	/**
	 * With the restart quarantine on, an ACL user who may not read the nodes' markers
	 * ({@code ~{fence}*} missing) still locks, with the marker guard off and a warning:
	 * the denial ({@code NOPERM}) is told from a marker the node could not read, whose
	 * grants count for nothing.
	 */
	@Test
	void aclUserWithoutTheMarkersLocksWithTheMarkerGuardOff(RedisNodes nodes) {
		this.nodes = nodes;
		TestSupport.createAclUser(nodes, PASSWORD, "~redlock:*", "+@all");
		try (Redlock redlock = TestSupport.loggingInAs(nodes, TestSupport.ACL_USER + ":" + PASSWORD,
				TestSupport.withQuarantine(Duration.ofSeconds(5)))) {
			ForgetfulNodes.awaitCounting(redlock);
			assertThat(redlock.acquire("no-markers", Duration.ofSeconds(5), Duration.ofSeconds(5)).release())
				.isEqualTo(ReleaseOutcome.RELEASED);
			for (int node = 0; node < nodes.size(); node++) {
				assertThat(redlock.internals().group().quarantine(node).markers().foundUnreadable())
					.as("node " + node + "'s marker unreadable")
					.isTrue();
			}
		}
	}

	/**
	 * An ACL user may not publish or subscribe (from Redis 7 on, a new user has no
	 * channels): releases still delete the key and say so, and a waiter still gets the
	 * lock, by polling instead of the release notice.
	 */
	@Test
	void aclUserWithoutChannelsReleasesAndWaitsAllTheSame(RedisNodes nodes) throws Exception {
		this.nodes = nodes;
		TestSupport.createAclUser(nodes, PASSWORD, "~redlock:*", "+@all", "resetchannels");
		try (Redlock redlock = loggingInAs(nodes, TestSupport.ACL_USER + ":" + PASSWORD)) {
			assertThat(redlock.acquire("no-channels", Duration.ofSeconds(5), Duration.ZERO).release())
				.isEqualTo(ReleaseOutcome.RELEASED);
			Lease held = redlock.acquire("no-channels", Duration.ofSeconds(10), Duration.ZERO);
			TestThreads.Running<Lease> waiter = TestThreads.start(false,
					() -> redlock.acquire("no-channels", Duration.ofSeconds(10), Duration.ofSeconds(10)));
			TestSupport.awaitTrue("a thread waits", Duration.ofSeconds(5), () -> redlock.waitingThreads() == 1);
			assertThat(held.release()).isEqualTo(ReleaseOutcome.RELEASED);
			assertThat(waiter.await(Duration.ofSeconds(10)).release()).isEqualTo(ReleaseOutcome.RELEASED);
		}
	}

	@Test
	void wrongPasswordFailsNamingTheNodesButNotThePassword(RedisNodes nodes) {
		requirePassword(nodes);
		String wrong = "Tr0ub4dor-and-3";
		try (Redlock redlock = loggingInAs(nodes, ":" + wrong)) {
			assertThatExceptionOfType(LockNotAcquiredException.class)
				.isThrownBy(() -> redlock.acquire("secret", Duration.ofSeconds(5), Duration.ZERO))
				.satisfies((ex) -> {
					assertThat(ex.reason()).isEqualTo(LockNotAcquiredException.Reason.NO_QUORUM);
					// the round ends once no quorum is left: two refusals of three settle
					// it, the third node may still be connecting
					assertThat(ex.failedNodes()).hasSizeGreaterThanOrEqualTo(2)
						.allSatisfy((failed) -> assertThat(failed.toUpperCase()).contains("WRONGPASS"))
						.allSatisfy((failed) -> assertThat(nodes.uris()).anySatisfy(failed::startsWith));
					assertThat(ex.getMessage()).doesNotContain(wrong, PASSWORD);
				});
		}
	}

	/** Makes every node ask for {@link #PASSWORD} until it restarts after the test. */
	private void requirePassword(RedisNodes nodes) {
		this.nodes = nodes;
		for (RedisNode node : nodes.nodes()) {
			node.command("CONFIG", "SET", "requirepass", PASSWORD);
		}
	}

	/** A Redlock whose node URIs carry the user info, {@code user:password}. */
	private static Redlock loggingInAs(RedisNodes nodes, String userInfo) {
		return TestSupport.loggingInAs(nodes, userInfo, TestSupport.SETTINGS);
	}

}
