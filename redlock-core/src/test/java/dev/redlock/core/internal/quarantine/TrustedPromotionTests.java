package dev.redlock.core.internal.quarantine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.helpers.NOPLogger;

import dev.redlock.core.QuarantineReason;
import dev.redlock.core.internal.transport.RedisNodeUri;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When a promotion costs a voter no quarantine, as pure logic: only on a voter that waits
 * for its replicas, only for a server this client can show to be a replica of the one it
 * knew (it continues that server's replication history, and was up before that server
 * last answered), and never when its marker shows a loss. Every case runs for a voter
 * that waits (where only the verified promotion is trusted) and one that does not (where
 * none is). The behaviour on real processes is in {@code ReplicatedSentinelVoterTests}.
 */
class TrustedPromotionTests {

	private static final Duration QUARANTINE = Duration.ofSeconds(60);

	/** The node's clock, in ms. */
	private static final long NODE = 1_700_000_000_000L;

	private static final String FORMER_REPLID = "f".repeat(40);

	/** This client's monotonic clock: it moves only when a test moves it. */
	private final AtomicLong ticker = new AtomicLong(System.nanoTime());

	/** The marker the former master had, its last heartbeat included. */
	private final NodeMarker known = new NodeMarker(0, NodeMarker.CLEAN, "aaaa", NodeMarker.NOT_PROMOTED, true,
			NODE - 10, "run-a:0:0:0");

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void aReplicaOfTheKnownServerPromotedInItsPlaceCountsOnOnlyWhereWritesWaitForReplicas(boolean waits) {
		NodeQuarantine quarantine = knowingTheFormerMaster(waits);
		MarkerWatch.MarkerWrite write = meet(quarantine, "run-b", 3_600L, FORMER_REPLID, this.known);
		if (waits) {
			assertThat(quarantine.counts()).isTrue();
			assertThat(write.cause()).isNull();
			assertThat(write.marker().promotedFrom()).as("written down, for the clients that meet it later")
				.isEqualTo(FORMER_REPLID);
			assertThat(write.marker().countsFromMillis()).isZero();
			assertThat(write.marker().nonce()).isEqualTo("aaaa");
		}
		else {
			assertThat(quarantine.counts()).isFalse();
			assertThat(write.marker().quarantineReason()).isEqualTo(QuarantineReason.FAILOVER);
		}
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void aPromotionWhereTheFormerMasterHadMoreReplicasThanEachWriteWaitsForIsQuarantined(boolean waits) {
		// each write waits for one replica of two: the other may be promoted without it
		NodeQuarantine quarantine = knowingTheFormerMaster(waits, 2);
		MarkerWatch.MarkerWrite write = meet(quarantine, "run-b", 3_600L, FORMER_REPLID, this.known);
		assertThat(quarantine.counts()).isFalse();
		assertThat(write.marker().quarantineReason()).isEqualTo(QuarantineReason.FAILOVER);
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void aVerifiedPromotionExplainsAMarkerThatMissedTheFormerMastersLastHeartbeats(boolean waits) {
		NodeQuarantine quarantine = knowingTheFormerMaster(waits);
		NodeMarker behind = new NodeMarker(0, NodeMarker.CLEAN, "aaaa", NodeMarker.NOT_PROMOTED, true, NODE - 5_000,
				"run-a:0:0:0");
		meet(quarantine, "run-b", 3_600L, FORMER_REPLID, behind);
		assertThat(quarantine.counts()).isEqualTo(waits);
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void theFormerMasterRestartedFromItsDumpContinuesItsOwnHistoryAndIsQuarantined(boolean waits) {
		NodeQuarantine quarantine = knowingTheFormerMaster(waits);
		// asked a minute after it was last asked, up for 10 s: it started after it last
		// answered, so it is that server restarted (a dump may be older than its writes)
		this.ticker.addAndGet(TimeUnit.SECONDS.toNanos(60));
		meet(quarantine, "run-b", 10L, FORMER_REPLID, this.known);
		assertThat(quarantine.counts()).isFalse();
		assertThat(quarantine.reason()).isIn(QuarantineReason.RESTART, QuarantineReason.FAILOVER);
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void aServerThatStartedJustBeforeTheFormerAnsweredLastIsTakenForARestartWhenItsUptimeMayReadOneTooMany(
			boolean waits) {
		NodeQuarantine quarantine = knowingTheFormerMaster(waits);
		// 1.5 s after the former was asked, "2 s" up: it may have started 1 s ago, after
		// the question
		this.ticker.addAndGet(TimeUnit.MILLISECONDS.toNanos(1_500));
		meet(quarantine, "run-b", 2L, FORMER_REPLID, this.known);
		assertThat(quarantine.counts()).isFalse();
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void aServerOfAnotherReplicationHistoryIsQuarantined(boolean waits) {
		NodeQuarantine quarantine = knowingTheFormerMaster(waits);
		meet(quarantine, "run-b", 3_600L, "e".repeat(40), this.known);
		assertThat(quarantine.counts()).isFalse();
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void aClientThatDidNotKnowTheFormerServerCannotTellAndQuarantines(boolean waits) {
		NodeQuarantine quarantine = quarantineOf(waits);
		MarkerWatch.MarkerWrite write = meet(quarantine, "run-b", 3_600L, FORMER_REPLID, this.known);
		assertThat(quarantine.counts()).isFalse();
		assertThat(write.marker().quarantineReason()).isEqualTo(QuarantineReason.FAILOVER);
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void aVerifiedPromotionWhoseMarkerWasReplacedByACleanOneLostData(boolean waits) {
		NodeQuarantine quarantine = knowingTheFormerMaster(waits);
		NodeMarker fresh = new NodeMarker(0, NodeMarker.CLEAN, "bbbb", NodeMarker.NOT_PROMOTED, true, NODE,
				"run-b:0:0:0");
		meet(quarantine, "run-b", 3_600L, FORMER_REPLID, fresh);
		assertThat(quarantine.counts()).isFalse();
		if (waits) {
			assertThat(quarantine.reason()).isEqualTo(QuarantineReason.DATA_LOSS);
		}
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void theSamePromotionToldAgainByAnotherConnectionStillCounts(boolean waits) {
		NodeQuarantine quarantine = knowingTheFormerMaster(waits);
		meet(quarantine, "run-b", 3_600L, FORMER_REPLID, this.known);
		NodeMarker written = this.known.afterPromotion(FORMER_REPLID, "run-b:0:0:0");
		meet(quarantine, "run-b", 3_600L, FORMER_REPLID, written);
		assertThat(quarantine.counts()).isEqualTo(waits);
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void theFormerMasterAnsweringAConnectionOpenedBeforeThePromotionTeachesNothing(boolean waits) {
		NodeQuarantine quarantine = knowingTheFormerMaster(waits);
		meet(quarantine, "run-b", 3_600L, FORMER_REPLID, this.known);
		// a probe's round on a connection to the former master, read after the promotion
		// was followed
		long asked = this.ticker.addAndGet(1_000_000);
		MarkerWatch.MarkerWrite write = quarantine.inspect(report("run-a", 3_601L, null, FORMER_REPLID, this.known),
				this.ticker.addAndGet(1_000_000), quarantine.markers().memory(), asked);
		assertThat(quarantine.counts()).isEqualTo(waits);
		if (waits) {
			assertThat(write).isNull();
			assertThat(quarantine.runId()).as("the promoted replica is the server").isEqualTo("run-b");
		}
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void theFormerMasterPromotedBackInItsTurnIsAVerifiedPromotionToo(boolean waits) {
		NodeQuarantine quarantine = knowingTheFormerMaster(waits);
		MarkerWatch.MarkerWrite promotion = meet(quarantine, "run-b", 3_600L, FORMER_REPLID, this.known);
		// run-a, a replica of run-b since, is promoted back in its place
		meet(quarantine, "run-a", 3_700L, "2".repeat(40), promotion.marker());
		assertThat(quarantine.counts()).isEqualTo(waits);
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void aPromotedReplicaUpForLessThanAQuarantineWaitsOutTheRestFromItsStart(boolean waits) {
		NodeQuarantine quarantine = knowingTheFormerMaster(waits);
		// a replica that restarted from an older dump 30 s ago may have lost writes it
		// had acknowledged: they expire a quarantine after its start
		meet(quarantine, "run-b", 30L, FORMER_REPLID, this.known);
		assertThat(quarantine.counts()).isFalse();
		if (waits) {
			assertThat(quarantine.reason()).isEqualTo(QuarantineReason.RESTART);
			assertThat(quarantine.remaining()).isBetween(Duration.ofSeconds(30), Duration.ofSeconds(31));
		}
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void theTrustedServerPromotedAgainAfterAFailbackThisClientMissedIsAFailover(boolean waits) {
		NodeQuarantine quarantine = knowingTheFormerMaster(waits);
		MarkerWatch.MarkerWrite promotion = meet(quarantine, "run-b", 3_600L, FORMER_REPLID, this.known);
		meet(quarantine, "run-b", 3_700L, "9".repeat(40), promotion.marker());
		assertThat(quarantine.counts()).isFalse();
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void aServerKnownOnlyAsAReplicaTellsNoHistoryToContinue(boolean waits) {
		NodeQuarantine quarantine = quarantineOf(waits);
		// a replica reports its master's replication id, not its own
		long asked = this.ticker.get();
		quarantine.inspect(
				new NodeReport("run-a", 3_600L, null, 0, 0, 0, null, NODE * 1_000,
						this.known.encode().getBytes(StandardCharsets.UTF_8), null, -1),
				this.ticker.addAndGet(1_000_000), quarantine.markers().memory(), asked);
		meet(quarantine, "run-b", 3_600L, FORMER_REPLID, this.known);
		assertThat(quarantine.counts()).isFalse();
	}

	/** A client that greeted the former master {@code run-a} and read its marker. */
	private NodeQuarantine knowingTheFormerMaster(boolean waits) {
		return knowingTheFormerMaster(waits, 1);
	}

	/** A quarantine that knows the former master, with that many replicas. */
	private NodeQuarantine knowingTheFormerMaster(boolean waits, int replicas) {
		NodeQuarantine quarantine = quarantineOf(waits);
		long asked = this.ticker.get();
		MarkerWatch.MarkerWrite write = quarantine.inspect(
				report("run-a", 3_600L, null, FORMER_REPLID, this.known, replicas), this.ticker.addAndGet(1_000_000),
				quarantine.markers().memory(), asked);
		assertThat(write).as("a heartbeat is not due yet").isNull();
		assertThat(quarantine.counts()).isTrue();
		return quarantine;
	}

	/**
	 * A greeting of another server, answering as the master now.
	 * @return what it writes in the marker, {@code null} for nothing
	 */
	private MarkerWatch.@Nullable MarkerWrite meet(NodeQuarantine quarantine, String runId, long uptimeSeconds,
			String promotedFrom, NodeMarker marker) {
		long asked = this.ticker.addAndGet(1_000_000);
		return quarantine.inspect(report(runId, uptimeSeconds, promotedFrom, "2".repeat(40), marker),
				this.ticker.addAndGet(1_000_000), quarantine.markers().memory(), asked);
	}

	private NodeQuarantine quarantineOf(boolean waits) {
		String uri = waits ? "redis-sentinel://127.0.0.1:26379?waitReplicas=1#orders"
				: "redis-sentinel://127.0.0.1:26379#orders";
		return new NodeQuarantine(RedisNodeUri.parse(uri), QUARANTINE, this.ticker::get, NOPLogger.NOP_LOGGER);
	}

	private static NodeReport report(String runId, long uptimeSeconds, @Nullable String promotedFrom,
			String replicationId, NodeMarker marker) {
		return report(runId, uptimeSeconds, promotedFrom, replicationId, marker, 1);
	}

	private static NodeReport report(String runId, long uptimeSeconds, @Nullable String promotedFrom,
			String replicationId, NodeMarker marker, int replicas) {
		return new NodeReport(runId, uptimeSeconds, promotedFrom, 0, 0, 0, null, NODE * 1_000,
				marker.encode().getBytes(StandardCharsets.UTF_8), replicationId, replicas);
	}

}
