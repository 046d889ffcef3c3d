package dev.redlock.core.internal.quarantine;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.transport.RedisNodeUri;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The quarantine arithmetic on its own (the behaviour on real nodes is in
 * {@code RestartQuarantineTests}).
 */
class NodeQuarantineTests {

	private static final Duration QUARANTINE = Duration.ofSeconds(60);

	private final NodeQuarantine quarantine = quarantineOf(QUARANTINE);

	@Test
	void longRunningNodeCounts() {
		this.quarantine.observe("run-a", 3_600L, System.nanoTime());
		assertThat(this.quarantine.counts()).isTrue();
	}

	@Test
	void recentlyStartedNodeWaitsOutTheRestOfTheQuarantineCountingItsUptimeOneSecondShort() {
		// "20" may mean anything from 19 s and a bit: the node waits as if it had been up
		// 19 s
		this.quarantine.observe("run-a", 20L, System.nanoTime());
		assertThat(this.quarantine.counts()).isFalse();
		assertThat(this.quarantine.remaining()).isBetween(Duration.ofSeconds(40), Duration.ofSeconds(41));
	}

	@Test
	void anUptimeOfOneSecondCanBeAFreshStartSoItNeverEndsAShortQuarantine() {
		long seen = System.nanoTime();
		NodeQuarantine shortQuarantine = startedAt(Duration.ofMillis(300), 1L, seen);
		assertThat(shortQuarantine.counts()).isFalse();
		Duration remaining = shortQuarantine.remaining();
		// the whole quarantine from the moment it was seen, less only the time this test
		// took since
		Duration since = Duration.ofNanos(System.nanoTime() - seen);
		assertThat(remaining).isBetween(Duration.ofMillis(300).minus(since), Duration.ofMillis(300));
	}

	@Test
	void anotherServerAtTheSameAddressWaitsTheWholeQuarantineWhateverItsUptime() {
		this.quarantine.observe("run-a", 3_600L, System.nanoTime());
		this.quarantine.observe("run-b", 7_200L, System.nanoTime());
		assertThat(this.quarantine.counts()).isFalse();
		assertThat(this.quarantine.remaining()).isBetween(Duration.ofSeconds(59), QUARANTINE);
	}

	@Test
	void theSameServerSeenAgainLaterIsNeverQuarantinedAgainByACoarserReading() {
		long start = System.nanoTime();
		NodeQuarantine shortQuarantine = startedAt(Duration.ofSeconds(2), 0L, start);
		assertThat(shortQuarantine.counts()).isFalse();
		// 2.5 s later a new connection reads "2": alone, that would mean "up since 1 s,
		// wait another second"
		long later = start + Duration.ofMillis(2_500).toNanos();
		shortQuarantine.observe("run-a", 2L, later);
		assertThat(shortQuarantine.remaining()).isLessThanOrEqualTo(Duration.ofSeconds(2));
		NodeQuarantine longRunning = startedAt(Duration.ofSeconds(2), 3_600L, start);
		longRunning.observe("run-a", 1L, start);
		assertThat(longRunning.counts()).isTrue();
	}

	@Test
	void zeroQuarantineNeverQuarantines() {
		NodeQuarantine off = quarantineOf(Duration.ZERO);
		off.observe("run-a", 0L, System.nanoTime());
		off.observe("run-b", 0L, System.nanoTime());
		assertThat(off.counts()).isTrue();
	}

	/** The quarantine of one node, {@code redis://127.0.0.1:7001}. */
	private static NodeQuarantine quarantineOf(Duration quarantine) {
		return new NodeQuarantine(RedisNodeUri.parse("redis://127.0.0.1:7001"), quarantine);
	}

	/**
	 * The quarantine of one node whose server {@code run-a} was first seen with the given
	 * uptime.
	 */
	private static NodeQuarantine startedAt(Duration quarantine, long uptimeSeconds, long seenNanos) {
		NodeQuarantine started = quarantineOf(quarantine);
		started.observe("run-a", uptimeSeconds, seenNanos);
		return started;
	}

}
