package dev.redlock.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leases that are never released are let go once their validity is over, without anyone
 * asking for the held leases.
 */
@WithRedisNodes(count = 3)
class HeldLeasesTests {

	@Test
	void expiredLeasesAreDroppedWithoutAnyoneAsking(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS)) {
			for (int i = 0; i < 500; i++) {
				redlock.acquire("forgotten-" + i, Duration.ofMillis(300), Duration.ZERO);
			}
			assertThat(redlock.internals().heldCount()).isEqualTo(500);
			TestSupport.awaitTrue("every expired lease was dropped", Duration.ofSeconds(5),
					() -> redlock.internals().heldCount() == 0);
		}
	}

	@Test
	void leasesStillValidAreKept(RedisNodes nodes) {
		try (Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS)) {
			Lease kept = redlock.acquire("kept", Duration.ofSeconds(30), Duration.ZERO);
			redlock.acquire("short", Duration.ofMillis(100), Duration.ZERO);
			TestSupport.awaitTrue("the short lease was dropped", Duration.ofSeconds(5),
					() -> redlock.internals().heldCount() == 1);
			assertThat(redlock.heldLeases()).containsExactly(kept);
		}
	}

}
