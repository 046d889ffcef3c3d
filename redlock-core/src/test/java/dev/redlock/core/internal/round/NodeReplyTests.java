package dev.redlock.core.internal.round;

import java.net.SocketTimeoutException;

import org.junit.jupiter.api.Test;

import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A node's reply keeps what it was made with, though packed into three fields: node
 * index, kind, flags, reply or failure, and the time to the microsecond.
 */
class NodeReplyTests {

	private static final int[] NODES = { 0, 1, 4, 63, 64, 1_000_000 };

	@Test
	void aReplyKeepsItsNodeValueAndTime() {
		for (int node : NODES) {
			NodeReply reply = NodeReply.replied(node, 7L, 1_234_567);
			assertThat(reply.node()).isEqualTo(node);
			assertThat(reply.kind()).isEqualTo(NodeReply.Kind.REPLIED);
			assertThat(reply.value()).isEqualTo(7L);
			assertThat(reply.error()).isNull();
			assertThat(reply.nanos()).isEqualTo(1_234_000);
			assertThat(reply.written()).isTrue();
			assertThat(reply.followedUp()).isFalse();
		}
	}

	@Test
	void aFailureKeepsItsKindAndError() {
		JedisConnectionException timeout = new JedisConnectionException(new SocketTimeoutException("Read timed out"));
		JedisDataException error = new JedisDataException("NOSCRIPT No matching script");
		for (int node : NODES) {
			NodeReply timedOut = NodeReply.failed(node, timeout, 5_000);
			assertThat(timedOut.node()).isEqualTo(node);
			assertThat(timedOut.kind()).isEqualTo(NodeReply.Kind.TIMEOUT);
			assertThat(timedOut.error()).isSameAs(timeout);
			assertThat(timedOut.value()).isNull();
			assertThat(timedOut.written()).isTrue();
			NodeReply refused = NodeReply.notWritten(node, error, 0);
			assertThat(refused.kind()).isEqualTo(NodeReply.Kind.ERROR_REPLY);
			assertThat(refused.written()).isFalse();
			assertThat(refused.describeFailure()).isEqualTo("NOSCRIPT No matching script");
		}
	}

	@Test
	void aReplyNotAwaitedKeepsBothFlags() {
		for (boolean written : new boolean[] { false, true }) {
			for (boolean followedUp : new boolean[] { false, true }) {
				NodeReply reply = NodeReply.notAwaited(3, 99_999, written, followedUp);
				assertThat(reply.kind()).isEqualTo(NodeReply.Kind.NOT_AWAITED);
				assertThat(reply.node()).isEqualTo(3);
				assertThat(reply.written()).isEqualTo(written);
				assertThat(reply.followedUp()).isEqualTo(followedUp);
				assertThat(reply.nanos()).isEqualTo(99_000);
			}
		}
	}

	@Test
	void aTimeBeyondWhatMicrosecondsHoldIsCapped() {
		assertThat(NodeReply.replied(0, null, Long.MAX_VALUE).nanos()).isEqualTo(Integer.MAX_VALUE * 1_000L);
		assertThat(NodeReply.replied(0, null, -5).nanos()).isZero();
	}

}
