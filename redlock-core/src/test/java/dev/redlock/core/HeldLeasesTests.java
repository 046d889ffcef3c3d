package dev.redlock.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.redlock.core.TestSupport.ManualTicker;
import dev.redlock.core.internal.lease.HeldLeases;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leases that are never released are let go once their validity is over, without anyone
 * asking for the held leases. The leases' clock stands still while they are taken, so
 * that none runs out before they are counted however slowly the machine takes them, and
 * is then moved past their validity.
 */
@WithRedisNodes(count = 3)
class HeldLeasesTests {

	@Test
	void expiredLeasesAreDroppedWithoutAnyoneAsking(RedisNodes nodes) {
		ManualTicker ticker = new ManualTicker();
		try (Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS, ticker)) {
			for (int i = 0; i < 500; i++) {
				redlock.acquire("forgotten-" + i, Duration.ofMillis(300), Duration.ZERO);
			}
			assertThat(redlock.internals().heldCount()).isEqualTo(500);
			ticker.advance(Duration.ofSeconds(1));
			TestSupport.awaitTrue("every expired lease was dropped", Duration.ofSeconds(5),
					() -> redlock.internals().heldCount() == 0);
		}
	}

	@Test
	void leasesStillValidAreKept(RedisNodes nodes) {
		ManualTicker ticker = new ManualTicker();
		try (Redlock redlock = TestSupport.redlock(nodes, TestSupport.SETTINGS, ticker)) {
			Lease kept = redlock.acquire("kept", Duration.ofSeconds(30), Duration.ZERO);
			redlock.acquire("short", Duration.ofMillis(100), Duration.ZERO);
			ticker.advance(Duration.ofSeconds(1));
			TestSupport.awaitTrue("the short lease was dropped", Duration.ofSeconds(5),
					() -> redlock.internals().heldCount() == 1);
			assertThat(redlock.heldLeases()).containsExactly(kept);
		}
	}

}
