package dev.redlock.core.internal.quarantine;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import dev.redlock.core.QuarantineReason;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The marker's value, as written and read back, and as earlier versions wrote it.
 */
class NodeMarkerTests {

	@Test
	void aMarkerReadsBackAsWritten() {
		NodeMarker marker = new NodeMarker(1_700_000_060_000L, "rollback", "0a1b2c3d4e5f6a7b", "-", false,
				1_700_000_000_123L, "run-a:0:1:0");
		assertThat(NodeMarker.parse(bytes(marker.encode()))).isEqualTo(marker);
		assertThat(marker.encode()).startsWith(marker.head() + " ");
		assertThat(marker.quarantineReason()).isEqualTo(QuarantineReason.ROLLBACK);
	}

	@Test
	void markersOfEarlierVersionsHaveEpochZeroAndNoEvidence() {
		NodeMarker five = NodeMarker.parse(bytes("0 clean 0a1b2c3d4e5f6a7b - ok"));
		assertThat(five.epoch()).isZero();
		assertThat(five.evidence()).isEqualTo(NodeMarker.NO_EVIDENCE);
		assertThat(five.countersOk()).isTrue();
		NodeMarker four = NodeMarker.parse(bytes("1700000060000 data_loss 0a1b2c3d4e5f6a7b -"));
		assertThat(four.countersOk()).isFalse();
		assertThat(four.quarantineReason()).isEqualTo(QuarantineReason.DATA_LOSS);
	}

	@Test
	void anythingElseIsNoMarker() {
		assertThat(NodeMarker.parse(null)).isNull();
		assertThat(NodeMarker.parse(bytes("0 clean x - ok 12"))).isNull();
		assertThat(NodeMarker.parse(bytes("soon clean x - ok 12 -"))).isNull();
	}

	@Test
	void aReasonOfALaterVersionReadsAsALossOfData() {
		assertThat(NodeMarker.parse(bytes("1 meteor x - ok 1 -")).quarantineReason())
			.isEqualTo(QuarantineReason.DATA_LOSS);
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
