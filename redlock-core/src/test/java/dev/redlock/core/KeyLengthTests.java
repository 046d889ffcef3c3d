package dev.redlock.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Keys longer than {@link RedlockSettings#maxKeyLength()} UTF-8 bytes, prefix included,
 * are refused before anything reaches a node.
 */
@WithRedisNodes(count = 3)
class KeyLengthTests {

	/** The prefix {@code redlock:} is 8 bytes: 8 more make 16, the limit. */
	private static final RedlockSettings SETTINGS = TestSupport.SETTINGS.toBuilder().maxKeyLength(16).build();

	/**
	 * No connection opened in advance, so that a refused call shows by opening none; a
	 * client name of its own, so that the nodes' client lists tell its connections from
	 * other instances' (the nodes are shared, and another test's instance may still be
	 * connecting).
	 */
	private static final String COLD_CLIENT = "redlock-key-length-cold";

	private static final RedlockSettings COLD = SETTINGS.toBuilder().poolMinIdle(0).clientName(COLD_CLIENT).build();

	private static final Duration TTL = Duration.ofSeconds(5);

	@Test
	void aKeyOfExactlyTheLimitIsAccepted(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, SETTINGS);
				Lease lease = redlock.acquire("12345678", TTL, Duration.ZERO)) {
			assertThat(lease.isValid()).isTrue();
			// the round returns on a quorum: the lock is on a quorum at least
			assertThat(TestSupport.nodesWithKey(nodes, "redlock:12345678")).isGreaterThanOrEqualTo(redlock.quorum());
		}
	}

	@Test
	void aKeyOneByteOverTheLimitIsRefusedBeforeAnyNetworkCall(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, COLD)) {
			assertThatIllegalArgumentException().isThrownBy(() -> redlock.acquire("123456789", TTL, Duration.ZERO))
				.withMessageContaining("16 bytes")
				.withMessageContaining("maxKeyLength")
				.withMessageContaining("key prefix included");
			assertThatIllegalArgumentException().isThrownBy(() -> redlock.tryAcquire("123456789", TTL));
			assertNothingReachedTheNodes(redlock, nodes);
		}
	}

	@Test
	void lengthIsCountedInUtf8BytesNotCharacters(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, SETTINGS)) {
			// 5 characters, 10 bytes: 18 with the prefix
			assertThatIllegalArgumentException().isThrownBy(() -> redlock.tryAcquire("ééééé", TTL));
			// 2 characters, 8 bytes (two emoji, each a surrogate pair): exactly 16
			try (Lease lease = redlock.tryAcquire("\uD83D\uDD12\uD83D\uDD11", TTL).orElseThrow()) {
				assertThat(lease.isValid()).isTrue();
				// encoded as UTF-8 behind the prefix, as an ASCII name is
				assertThat(TestSupport.nodesWithKey(nodes, "redlock:\uD83D\uDD12\uD83D\uDD11"))
					.isGreaterThanOrEqualTo(redlock.quorum());
			}
		}
	}

	@Test
	void aHugeResourceIsRefusedWithAShortMessage(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, COLD.toBuilder().maxKeyLength(1024).build())) {
			String huge = "x".repeat(1_000_000);
			assertThatIllegalArgumentException().isThrownBy(() -> redlock.acquire(huge, TTL, Duration.ofSeconds(1)))
				.satisfies((ex) -> assertThat(ex.getMessage()).hasSizeLessThan(300).contains("1024 bytes"));
			assertNothingReachedTheNodes(redlock, nodes);
		}
	}

	private static void assertNothingReachedTheNodes(Redlock redlock, RedisNodes nodes) {
		TestSupport.awaitNoKeys(nodes);
		assertThat(redlock.nodeStatistics())
			.allSatisfy((node) -> assertThat(node.ok() + node.rejected() + node.timeouts() + node.errors()).isZero());
		for (int i = 0; i < nodes.size(); i++) {
			// no connection of this instance: Redlock opened none
			assertThat(nodes.node(i).command("CLIENT", "LIST")).doesNotContain("name=" + COLD_CLIENT);
		}
	}

}
