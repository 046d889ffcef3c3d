package dev.redlock.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.protocol.LockScripts;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Lock keys and fencing counter keys never meet, whatever the key prefix.
 */
@WithRedisNodes(count = 3)
class FencingKeySpaceTests {

	private static final Duration TTL = Duration.ofSeconds(10);

	@Test
	void withoutAKeyPrefixNoLockKeyIsAnotherResourcesCounter(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS.toBuilder().keyPrefix("").build())) {
			Lease fenced = redlock.acquire(LockRequest.of("x", TTL).named("orders").fenced(), Duration.ZERO);
			assertThat(fenced.fencingToken()).hasValue(1);
			fenced.release();
			assertThatIllegalArgumentException().isThrownBy(() -> redlock.tryAcquire("{fence}x", TTL))
				.withMessageContaining("reserved for fencing counters");
			// the counter of resource x is 1 on the quorum that made the token (the
			// round returns on a quorum: another node may have it too, or not yet)
			// (a node with a marker records its generation after the count)
			List<String> counters = nodes.nodes()
				.stream()
				.map((node) -> node.command("GET", "{fence}x"))
				.map((counter) -> (counter != null) ? counter.split(" ")[0] : null)
				.toList();
			assertThat(counters).filteredOn("1"::equals).hasSizeGreaterThanOrEqualTo(redlock.quorum());
			assertThat(counters).allMatch((counter) -> counter == null || counter.equals("1"));
		}
	}

	@Test
	void aKeyPrefixInTheCountersSpaceIsRefused() {
		assertThat(RedlockSettings.RESERVED_KEY_PREFIX).as("the counters' prefix, as the settings know it")
			.isEqualTo(LockScripts.FENCE_KEY_PREFIX);
		assertThatExceptionOfType(InvalidRedlockConfigurationException.class)
			.isThrownBy(() -> RedlockSettings.defaults().toBuilder().keyPrefix("{fence}app:").build())
			.withMessageContaining("keyPrefix");
	}

}
