package dev.redlock.core;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import redis.clients.jedis.exceptions.JedisDataException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How an acquisition's reply is read, in both shapes: the pipelined {@code SET NX PX},
 * {@code TIME}, {@code GET {fence}} and the fenced script's list. Pure parsing; the
 * nodes' side is covered by the forgetful-node and fencing tests on real nodes.
 */
class AcquireReplyTests {

	@Test
	void aPipelinedGrantReadsTheNodesClockAndMarker() {
		Object reply = pipelined(bytes("OK"), List.of(bytes("1764150000"), bytes("000123")), bytes("marker"));
		assertThat(AcquireReply.isAcquireReply(reply)).isTrue();
		assertThat(AcquireReply.grant(reply)).isEqualTo(1);
		assertThat(AcquireReply.nodeMicros(reply)).isEqualTo(1_764_150_000_000_123L);
		assertThat((byte[]) AcquireReply.marker(reply)).isEqualTo(bytes("marker"));
	}

	@Test
	void aRefusalStillReadsTheClock() {
		Object reply = pipelined(null, List.of(bytes("5"), bytes("999999")), null);
		assertThat(AcquireReply.grant(reply)).isZero();
		assertThat(AcquireReply.nodeMicros(reply)).isEqualTo(5_999_999L);
		assertThat(AcquireReply.marker(reply)).isNull();
	}

	@Test
	void aClockOrMarkerTheClientMayNotReadIsUnknown() {
		JedisDataException denied = new JedisDataException("NOPERM");
		Object reply = pipelined(bytes("OK"), denied, denied);
		assertThat(AcquireReply.grant(reply)).isEqualTo(1);
		assertThat(AcquireReply.nodeMicros(reply)).isEqualTo(-1);
		assertThat(AcquireReply.marker(reply)).isSameAs(AcquireReply.UNREADABLE);
	}

	@Test
	void digitsThatAreNotANumberGiveNoClock() {
		for (String bad : List.of("", "12a", "-5", "1234567890123456789")) {
			Object reply = pipelined(bytes("OK"), List.of(bytes(bad), bytes("0")), null);
			assertThat(AcquireReply.nodeMicros(reply)).as("seconds '%s'", bad).isEqualTo(-1);
		}
	}

	@Test
	void theFencedScriptsReplyReadsItsCounterClockMarkerAndGeneration() {
		Object reply = List.of(42L, bytes("7"), bytes("8"), bytes("marker"), bytes("g1"));
		assertThat(AcquireReply.grant(reply)).isEqualTo(42);
		assertThat(AcquireReply.nodeMicros(reply)).isEqualTo(7_000_008L);
		assertThat(AcquireReply.generation(reply)).isEqualTo("g1");
	}

	@Test
	void aReplyOfAnotherShapeGrantsNothing() {
		assertThat(AcquireReply.isAcquireReply(1L)).isFalse();
		assertThat(AcquireReply.grant(bytes("OK"))).isZero();
		assertThat(AcquireReply.nodeMicros(null)).isEqualTo(-1);
	}

	private static List<Object> pipelined(Object set, Object time, Object marker) {
		return Arrays.asList(set, time, marker);
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.US_ASCII);
	}

}
