package dev.redlock.core.internal.quarantine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.slf4j.helpers.NOPLogger;

import dev.redlock.core.QuarantineReason;
import dev.redlock.core.internal.transport.RedisNodeUri;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the marker watch decides from what it reads, as pure logic: in a round, and for a
 * greeting or a probe. The behaviour on real nodes is in {@code ForgetfulNodeTests} and
 * the fault tests; every combination of faults in
 * {@link ForgetfulMinoritySimulationTests}.
 */
class MarkerWatchTests {

	private static final Duration QUARANTINE = Duration.ofSeconds(60);

	private static final long QUARANTINE_MILLIS = QUARANTINE.toMillis();

	/** The node's clock, in ms. */
	private static final long NODE = 1_700_000_000_000L;

	private static final long HEARTBEAT = 1_000;

	/** This client's monotonic clock: it moves only when a test moves it. */
	private final AtomicLong ticker = new AtomicLong(System.nanoTime());

	private final NodeQuarantine quarantine = new NodeQuarantine(RedisNodeUri.parse("redis://127.0.0.1:7001"),
			QUARANTINE, this.ticker::get, NOPLogger.NOP_LOGGER);

	private final MarkerWatch markers = this.quarantine.markers();

	@Test
	void aMarkerWhoseEpochWentBackIsARollbackRecordedWithANewGeneration() {
		NodeMarker seen = marker(0, "clean", "aaaa", true, NODE - 10, "run:0:0:0");
		assertThat(admits(seen)).isTrue();
		NodeMarker older = marker(0, "clean", "aaaa", true, NODE - 5_000, "run:0:0:0");
		assertThat(admits(older)).isFalse();
		assertThat(this.quarantine.reason()).isEqualTo(QuarantineReason.ROLLBACK);
		MarkerWatch.MarkerWrite write = inspect(report(older));
		assertThat(write.expected()).isEqualTo(older.encode());
		assertThat(write.marker().quarantineReason()).isEqualTo(QuarantineReason.ROLLBACK);
		assertThat(write.marker().countsFromMillis()).isEqualTo(NODE + QUARANTINE_MILLIS);
		assertThat(write.marker().nonce()).isNotEqualTo("aaaa");
		assertThat(write.marker().countersOk()).isFalse();
	}

	@Test
	void aPromotedReplicaWhoseMarkerWentBackIsAFailoverNotARollback() {
		NodeMarker seen = marker(0, "clean", "aaaa", true, NODE - 10, "run:0:0:0");
		assertThat(admits(seen)).isTrue();
		// the replica's copy of the marker missed the former master's last heartbeats
		NodeMarker replicated = marker(0, "clean", "aaaa", true, NODE - 5_000, "run:0:0:0");
		MarkerWatch.MarkerWrite write = inspect(
				new NodeReport("promoted", 3_600L, "former-replid", 0, 0, 0, null, NODE * 1_000, bytes(replicated)));
		assertThat(this.quarantine.reason()).isEqualTo(QuarantineReason.FAILOVER);
		assertThat(write.marker().quarantineReason()).isEqualTo(QuarantineReason.FAILOVER);
		assertThat(write.marker().promotedFrom()).isEqualTo("former-replid");
		assertThat(write.marker().countsFromMillis()).isEqualTo(NODE + QUARANTINE_MILLIS);
	}

	@Test
	void aMarkerThatWentBackOnANodePromotedLongAgoIsStillARollback() {
		NodeMarker seen = new NodeMarker(0, "clean", "aaaa", "former-replid", true, NODE - 10, "run:0:0:0");
		assertThat(admits(seen)).isTrue();
		NodeMarker older = new NodeMarker(0, "clean", "aaaa", "former-replid", true, NODE - 5_000, "run:0:0:0");
		inspect(new NodeReport("promoted", 3_600L, "former-replid", 0, 0, 0, null, NODE * 1_000, bytes(older)));
		assertThat(this.quarantine.reason()).as("the promotion is the marker's already")
			.isEqualTo(QuarantineReason.ROLLBACK);
	}

	@Test
	void aMarkerReplacedByACleanOneMeansTheOldOneWasLost() {
		assertThat(admits(marker(0, "clean", "aaaa", true, NODE - 10, "-"))).isTrue();
		assertThat(admits(marker(0, "clean", "bbbb", true, NODE - 1, "-"))).isFalse();
		assertThat(this.quarantine.reason()).isEqualTo(QuarantineReason.DATA_LOSS);
	}

	@Test
	void aMarkerReplacedAfterALossCountsOnceItsQuarantineIsOver() {
		assertThat(admits(marker(0, "clean", "aaaa", true, NODE - 10, "-"))).isTrue();
		// another client found the loss and wrote it down: this one waits it out
		assertThat(admits(marker(NODE + 5_000, "data_loss", "bbbb", false, NODE - 1, "-"))).isFalse();
		assertThat(this.quarantine.remaining()).isEqualTo(Duration.ofSeconds(5));
		this.ticker.addAndGet(Duration.ofSeconds(6).toNanos());
		assertThat(this.markers.admits(bytes(marker(NODE + 5_000, "data_loss", "bbbb", false, NODE - 1, "-")),
				NODE + 6_000, this.ticker.get(), this.markers.memory()))
			.isTrue();
	}

	@Test
	void aGoneMarkerCountsInNoRoundAndIsALossForAClientThatSawIt() {
		assertThat(this.markers.admits(null, NODE, this.ticker.get(), this.markers.memory())).isFalse();
		assertThat(this.quarantine.counts()).as("a client that never saw one has nothing to wait out").isTrue();
		assertThat(admits(marker(0, "clean", "aaaa", true, NODE - 10, "-"))).isTrue();
		assertThat(this.markers.admits(null, NODE, this.ticker.get(), this.markers.memory())).isFalse();
		assertThat(this.quarantine.reason()).isEqualTo(QuarantineReason.DATA_LOSS);
	}

	@Test
	void aNodeUpForLongThatDroppedNothingGetsACleanMarker() {
		MarkerWatch.MarkerWrite write = inspect(new NodeReport("run", 3_600L, null, 0, 0, 0, null, NODE * 1_000, null));
		assertThat(write.expected()).isEmpty();
		assertThat(write.marker().clean()).isTrue();
		assertThat(write.marker().countsFromMillis()).isZero();
	}

	@Test
	void aNodeStartedRecentlyCountsAQuarantineAfterItsStartNotAfterTheFirstGreeting() {
		// up 20 s (counted as 19): counts 41 s from now, not 60
		MarkerWatch.MarkerWrite write = inspect(new NodeReport("run", 20L, null, 0, 0, 0, null, NODE * 1_000, null));
		assertThat(write.marker().quarantineReason()).isEqualTo(QuarantineReason.RESTART);
		assertThat(write.marker().countsFromMillis()).isEqualTo(NODE - 19_000 + QUARANTINE_MILLIS);
	}

	@Test
	void aNodeThatDroppedKeysSinceItStartedWaitsAWholeQuarantine() {
		MarkerWatch.MarkerWrite write = inspect(new NodeReport("run", 3_600L, null, 1, 0, 0, null, NODE * 1_000, null));
		assertThat(write.marker().quarantineReason()).isEqualTo(QuarantineReason.DATA_LOSS);
		assertThat(write.marker().countsFromMillis()).isEqualTo(NODE + QUARANTINE_MILLIS);
	}

	@Test
	void evidenceThatRoseSinceTheMarkerWasWrittenIsALossWrittenDown() {
		NodeMarker marker = marker(0, "clean", "aaaa", true, NODE - 10, "run:0:0:0");
		MarkerWatch.MarkerWrite write = inspect(
				new NodeReport("run", 3_600L, null, 0, 1, 0, null, NODE * 1_000, bytes(marker)));
		assertThat(this.quarantine.reason()).isEqualTo(QuarantineReason.ROLLBACK);
		assertThat(write.marker().countsFromMillis()).isEqualTo(NODE + QUARANTINE_MILLIS);
		assertThat(write.marker().evidence()).isEqualTo("run:0:1:0");
	}

	@Test
	void aHeartbeatRaisesTheEpochOncePerProbePeriodAndChangesNothingElse() {
		NodeMarker marker = marker(0, "clean", "aaaa", true, NODE - 10, "run:0:0:0");
		assertThat(inspect(report(marker))).isNull();
		// a probe period later, by the node's clock
		MarkerWatch.MarkerWrite heartbeat = inspect(
				new NodeReport("run", 3_600L, null, 0, 0, 0, null, (NODE - 10 + HEARTBEAT) * 1_000, bytes(marker)));
		assertThat(heartbeat.marker().head()).isEqualTo(marker.head());
		assertThat(heartbeat.expected()).isEqualTo(marker.encode());
		assertThat(this.quarantine.counts()).isTrue();
	}

	@Test
	void aClockStepFoundInARoundIsWrittenDownKeepingTheGenerationAndNeverShorteningAQuarantine() {
		this.quarantine.clockOff(true, TimeUnit.SECONDS.toNanos(120));
		assertThat(this.quarantine.reason()).isEqualTo(QuarantineReason.CLOCK_STEP);
		NodeMarker marker = marker(0, "clean", "aaaa", true, NODE - 10, "run:0:0:0");
		MarkerWatch.MarkerWrite write = inspect(report(marker));
		assertThat(write.marker().quarantineReason()).isEqualTo(QuarantineReason.CLOCK_STEP);
		assertThat(write.marker().nonce()).isEqualTo("aaaa");
		assertThat(write.marker().countersOk()).isTrue();
		assertThat(write.marker().countsFromMillis()).isEqualTo(NODE + QUARANTINE_MILLIS);
		this.quarantine.clockOff(true, TimeUnit.SECONDS.toNanos(120));
		NodeMarker later = marker(NODE + 2 * QUARANTINE_MILLIS, "restart", "aaaa", true, NODE - 10, "run:0:0:0");
		assertThat(inspect(report(later)).marker().countsFromMillis()).isEqualTo(NODE + 2 * QUARANTINE_MILLIS);
	}

	@Test
	void aRoundJudgesTheMarkerAgainstWhatWasKnownWhenItStarted() {
		assertThat(admits(marker(0, "clean", "aaaa", true, NODE - 10, "-"))).isTrue();
		MarkerWatch.Memory atStart = this.markers.memory();
		// meanwhile another round read a newer epoch, a heartbeat
		assertThat(admits(marker(0, "clean", "aaaa", true, NODE + 990, "-"))).isTrue();
		// this round's older read is not a rollback
		assertThat(this.markers.admits(bytes(marker(0, "clean", "aaaa", true, NODE - 10, "-")), NODE, this.ticker.get(),
				atStart))
			.isTrue();
		assertThat(this.quarantine.counts()).isTrue();
	}

	private boolean admits(NodeMarker marker) {
		return this.markers.admits(bytes(marker), NODE, this.ticker.get(), this.markers.memory());
	}

	private MarkerWatch.MarkerWrite inspect(NodeReport report) {
		return this.markers.inspect(report, this.ticker.get(), HEARTBEAT, this.markers.memory(), false);
	}

	private static NodeReport report(NodeMarker marker) {
		return new NodeReport("run", 3_600L, null, 0, 0, 0, null, NODE * 1_000, bytes(marker));
	}

	private static NodeMarker marker(long countsFrom, String reason, String nonce, boolean countersOk, long epoch,
			String evidence) {
		return new NodeMarker(countsFrom, reason, nonce, NodeMarker.NOT_PROMOTED, countersOk, epoch, evidence);
	}

	private static byte[] bytes(NodeMarker marker) {
		return marker.encode().getBytes(StandardCharsets.UTF_8);
	}

}
