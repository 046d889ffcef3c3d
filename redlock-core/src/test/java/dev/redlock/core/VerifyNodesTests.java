package dev.redlock.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The startup check refuses a setup in which the restart quarantine could not work.
 */
@WithRedisNodes(count = 3)
class VerifyNodesTests {

	private RedisNodes nodes;

	@AfterEach
	void dropUsers() {
		TestSupport.dropAclUser(this.nodes);
	}

	@Test
	void userWithoutInfoIsAnErrorWhileTheQuarantineIsOn(RedisNodes nodes) {
		this.nodes = nodes;
		TestSupport.createAclUser(nodes, "pw-Locker-1", "~*", "+@all", "-info");
		List<String> uris = nodes.nodes()
			.stream()
			.map((node) -> "redis://locker:pw-Locker-1@127.0.0.1:" + node.port())
			.toList();
		try (Redlock redlock = Redlock.builder().nodes(uris).settings(RedlockSettings.defaults()).build()) {
			List<NodeFinding> findings = redlock.verifyNodes();
			assertThat(findings).filteredOn((finding) -> finding.severity() == NodeFinding.Severity.ERROR)
				.hasSize(3)
				.allSatisfy((finding) -> assertThat(finding.message()).contains("refuses INFO", "+info")
					.doesNotContain("pw-Locker-1"));
		}
		try (Redlock off = Redlock.builder().nodes(uris).settings(TestSupport.SETTINGS).build()) {
			assertThat(off.verifyNodes()).noneMatch((finding) -> finding.severity() == NodeFinding.Severity.ERROR);
			try (Lease lease = off.acquire("no-info", Duration.ofSeconds(5), Duration.ZERO)) {
				assertThat(lease.isValid()).isTrue();
			}
		}
	}

}
