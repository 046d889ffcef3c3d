package dev.redlock.core.internal.quarantine;

import org.junit.jupiter.api.Test;

import dev.redlock.core.QuarantineReason;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a node's evidence, recorded in its marker and shown again later, tells of what it
 * dropped in between.
 */
class EvidenceTests {

	@Test
	void theSameCountsShowNothing() {
		assertThat(Evidence.compare("run-a:1:0:5", "run-a:1:0:5")).isNull();
	}

	@Test
	void aCallOfDebugMeansTheNodeMayHaveReloadedAnOlderDump() {
		QuarantineCause cause = Evidence.compare("run-a:0:0:0", "run-a:0:1:0");
		assertThat(cause.reason()).isEqualTo(QuarantineReason.ROLLBACK);
		assertThat(cause.detail()).contains("DEBUG");
	}

	@Test
	void aFlushOrAnEvictionIsALossOfData() {
		assertThat(Evidence.compare("run-a:0:0:0", "run-a:1:0:0").reason()).isEqualTo(QuarantineReason.DATA_LOSS);
		QuarantineCause evicted = Evidence.compare("run-a:0:0:7", "run-a:0:0:9");
		assertThat(evicted.reason()).isEqualTo(QuarantineReason.DATA_LOSS);
		assertThat(evicted.detail()).contains("evicted 2 keys");
	}

	@Test
	void countsThatWentDownWereResetAndHideWhatHappened() {
		QuarantineCause reset = Evidence.compare("run-a:3:0:0", "run-a:0:0:0");
		assertThat(reset.reason()).isEqualTo(QuarantineReason.DATA_LOSS);
		assertThat(reset.detail()).contains("RESETSTAT");
	}

	@Test
	void anotherRunOfTheServerOrUnknownEvidenceCannotBeCompared() {
		// a restart is judged by the node's uptime, not here
		assertThat(Evidence.compare("run-a:3:1:0", "run-b:0:0:0")).isNull();
		assertThat(Evidence.compare(NodeMarker.NO_EVIDENCE, "run-a:0:0:0")).isNull();
		assertThat(Evidence.compare("run-a:0:0:0", NodeMarker.NO_EVIDENCE)).isNull();
	}

}
