package dev.redlock.core;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import redis.clients.jedis.exceptions.JedisDataException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How an acquisition's reply is read, in its three shapes: the pipelined {@code SET NX
 * PX}, {@code TIME}, {@code GET {fence}}; the fenced script's list; and, for a fenced
 * lock without the quarantine, the {@code SET NX PX} with the {@code GET} of its counter.
 * Pure parsing; the nodes' side is covered by the forgetful-node and fencing tests on
 * real nodes.
 */
class AcquireReplyTests {

	private static final byte[] OURS = bytes("our-value");

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
	void aFencedGrantWithoutTheQuarantineCountsOneMoreThanTheCounterItRead() {
		assertThat(AcquireReply.grant(counterRead(bytes("OK"), OURS, bytes("41")))).isEqualTo(42);
		// a counter a quorum confirmed for a marker's generation
		assertThat(AcquireReply.grant(counterRead(bytes("OK"), OURS, bytes("41 g7")))).isEqualTo(42);
		// a resource never locked with fencing: its first token is 1
		Object first = counterRead(bytes("OK"), OURS, null);
		assertThat(AcquireReply.grant(first)).isEqualTo(1);
		assertThat(AcquireReply.nodeMicros(first)).isEqualTo(-1);
		assertThat(AcquireReply.marker(first)).isNull();
		assertThat(AcquireReply.readAnotherValue(first, OURS)).isFalse();
		assertThat(NodeReply.replied(0, first, 1_000).isGrant(true)).isTrue();
	}

	@Test
	void aFencedRefusalWithoutTheQuarantineGrantsNothingAndLeavesNothing() {
		Object reply = counterRead(null, bytes("someone else's"), bytes("41"));
		assertThat(AcquireReply.isAcquireReply(reply)).isTrue();
		assertThat(AcquireReply.grant(reply)).isZero();
		assertThat(AcquireReply.readAnotherValue(reply, OURS)).isFalse();
		NodeReply refused = NodeReply.replied(0, reply, 1_000);
		assertThat(refused.isGrant(true)).isFalse();
		assertThat(refused.isRefused()).isTrue();
		assertThat(refused.mayHoldWrite()).isFalse();
	}

	@Test
	void aGrantThatReadsAnotherValueBackIsNotTheReplyToOurCommand() {
		// what a connection out of step would read: a stale OK, then someone else's key
		Object reply = counterRead(bytes("OK"), bytes("someone else's"), bytes("41"));
		assertThat(AcquireReply.readAnotherValue(reply, OURS)).isTrue();
		assertThat(AcquireReply.readAnotherValue(counterRead(bytes("OK"), null, bytes("41")), OURS)).isTrue();
		// and a reply of another shape, which reads nothing back, is judged by its shape
		assertThat(AcquireReply.readAnotherValue(List.of(42L, bytes("7"), bytes("8"), bytes("m")), OURS)).isFalse();
	}

	@Test
	void aCounterThatIsNotACountIsNoGrantThoughTheKeyWasSet() {
		for (String bad : List.of("", "x", "4x2", " 5", "1e+14", "1234567890123456789")) {
			Object reply = counterRead(bytes("OK"), OURS, bytes(bad));
			assertThat(AcquireReply.grant(reply)).as("counter '%s'", bad).isEqualTo(-1);
			NodeReply node = NodeReply.replied(0, reply, 1_000);
			assertThat(node.isGrant(true)).isFalse();
			// the key is ours all the same: it must be removed
			assertThat(node.isRefused()).isFalse();
			assertThat(node.mayHoldWrite()).isTrue();
		}
	}

	@Test
	void aReplyOfAnotherShapeGrantsNothing() {
		assertThat(AcquireReply.isAcquireReply(1L)).isFalse();
		assertThat(AcquireReply.grant(bytes("OK"))).isZero();
		assertThat(AcquireReply.nodeMicros(null)).isEqualTo(-1);
		// two replies, but not a SET's and an MGET's (stale replies of something else)
		assertThat(AcquireReply.isAcquireReply(Arrays.asList(bytes("OK"), bytes("5")))).isFalse();
		assertThat(AcquireReply.isAcquireReply(Arrays.asList(null, null))).isFalse();
		assertThat(AcquireReply.isAcquireReply(Arrays.asList(bytes("OK"), List.of(1L, 2L)))).isFalse();
		assertThat(AcquireReply.isAcquireReply(Arrays.asList(bytes("OK"), List.of(OURS)))).isFalse();
	}

	/** The replies of {@code SET NX PX} and {@code MGET} of the key and its counter. */
	private static List<Object> counterRead(Object set, Object lockValue, Object counter) {
		return Arrays.asList(set, Arrays.asList(lockValue, counter));
	}

	private static List<Object> pipelined(Object set, Object time, Object marker) {
		return Arrays.asList(set, time, marker);
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.US_ASCII);
	}

}
