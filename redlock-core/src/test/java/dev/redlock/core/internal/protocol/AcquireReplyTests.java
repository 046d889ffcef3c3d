package dev.redlock.core.internal.protocol;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.AcquireAttempt;
import dev.redlock.core.internal.round.NodeReply;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisClusterException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisMovedDataException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How an acquisition's reply is read, in its three shapes: the pipelined {@code SET NX
 * PX}, {@code TIME}, {@code GET {fence}}; the fenced script's list; and, for a fenced
 * lock without the quarantine, the counting script's count and value. Pure parsing; the
 * nodes' side is covered by the forgetful-node and fencing tests on real nodes.
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
		JedisDataException denied = new JedisAccessControlException("NOPERM No permissions to access a key");
		Object reply = pipelined(bytes("OK"), denied, denied);
		assertThat(AcquireReply.grant(reply)).isEqualTo(1);
		assertThat(AcquireReply.nodeMicros(reply)).isEqualTo(-1);
		assertThat(AcquireReply.marker(reply)).isSameAs(AcquireReply.UNREADABLE);
		assertThat(AcquireReply.isUnreadable(AcquireReply.marker(reply))).isTrue();
	}

	@Test
	void aMarkerTheNodeCouldNotReadIsNotTakenForOneTheClientMayNotRead() {
		for (JedisDataException failed : List.of(new JedisMovedDataException("MOVED 7040 127.0.0.1:7001", null, 7040),
				new JedisClusterException("CLUSTERDOWN The cluster is down"),
				new JedisDataException("ERR Script attempted to access a slot not served"))) {
			Object marker = AcquireReply.marker(pipelined(bytes("OK"), List.of(bytes("1"), bytes("0")), failed));
			assertThat(AcquireReply.isNotRead(marker)).as(failed.getMessage()).isTrue();
			assertThat(AcquireReply.isUnreadable(marker)).as(failed.getMessage()).isFalse();
		}
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
	void aFencedGrantWithoutTheQuarantineReadsTheCountItRaisedTheCounterTo() {
		Object reply = counted(42L, OURS);
		assertThat(AcquireReply.isAcquireReply(reply)).isTrue();
		assertThat(AcquireReply.grant(reply)).isEqualTo(42);
		assertThat(AcquireReply.nodeMicros(reply)).isEqualTo(-1);
		assertThat(AcquireReply.marker(reply)).isNull();
		assertThat(AcquireReply.generation(reply)).isEmpty();
		assertThat(AcquireReply.readAnotherValue(reply, OURS)).isFalse();
		assertThat(AcquireAttempt.isGrant(NodeReply.replied(0, reply, 1_000), true)).isTrue();
		// a first token is 1, and still no plain grant
		assertThat(AcquireAttempt.isGrant(NodeReply.replied(0, counted(1L, OURS), 1_000), false)).isFalse();
	}

	@Test
	void aFencedRefusalWithoutTheQuarantineGrantsNothingAndLeavesNothing() {
		NodeReply refused = NodeReply.replied(0, counted(0L, OURS), 1_000);
		assertThat(AcquireAttempt.isGrant(refused, true)).isFalse();
		assertThat(AcquireAttempt.isRefusal(refused)).isTrue();
		assertThat(AcquireAttempt.mayHoldValue(refused)).isFalse();
	}

	@Test
	void aCountedReplyNamingAnotherValueIsNotTheReplyToOurCommand() {
		// what a connection out of step would read: someone else's acquisition's reply
		assertThat(AcquireReply.readAnotherValue(counted(42L, bytes("someone else's")), OURS)).isTrue();
		// a reply of another shape names no value, and is judged by its shape
		assertThat(AcquireReply.readAnotherValue(List.of(42L, bytes("7"), bytes("8"), bytes("m")), OURS)).isFalse();
	}

	@Test
	void aCounterThatIsNotACountIsNoGrantThoughTheKeyWasSet() {
		// the counting script's answer when the stored counter is not a number
		NodeReply node = NodeReply.replied(0, counted(-1L, OURS), 1_000);
		assertThat(AcquireReply.grant(node.value())).isEqualTo(-1);
		assertThat(AcquireAttempt.isGrant(node, true)).isFalse();
		// the key is ours all the same: it must be removed
		assertThat(AcquireAttempt.isRefusal(node)).isFalse();
		assertThat(AcquireAttempt.mayHoldValue(node)).isTrue();
	}

	@Test
	void aReplyOfAnotherShapeGrantsNothing() {
		assertThat(AcquireReply.isAcquireReply(1L)).isFalse();
		assertThat(AcquireReply.grant(bytes("OK"))).isZero();
		assertThat(AcquireReply.nodeMicros(null)).isEqualTo(-1);
		// two replies, but not a count and a value (stale replies of something else)
		assertThat(AcquireReply.isAcquireReply(Arrays.asList(bytes("OK"), bytes("5")))).isFalse();
		assertThat(AcquireReply.isAcquireReply(Arrays.asList(null, null))).isFalse();
		assertThat(AcquireReply.isAcquireReply(Arrays.asList(1L, 2L))).isFalse();
		assertThat(AcquireReply.isAcquireReply(Arrays.asList(bytes("OK"), List.of(OURS)))).isFalse();
	}

	/** The counting script's reply: the count, and the lock value it was called with. */
	private static List<Object> counted(long count, byte[] lockValue) {
		return Arrays.asList(count, lockValue);
	}

	private static List<Object> pipelined(Object set, Object time, Object marker) {
		return Arrays.asList(set, time, marker);
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.US_ASCII);
	}

}
