package dev.redlock.core;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.transport.PipelinedConnection;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.util.RedisInputStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a connection reads status replies: {@code OK} into one shared array, any other
 * status byte for byte as Jedis reads it, and the stream left at the next reply. Pure
 * parsing; the nodes' side is every test that locks.
 */
class StatusReplyTests {

	@Test
	void okIsTheSharedArray() {
		RedisInputStream input = stream("+OK\r\n+OK\r\n");
		assertThat(PipelinedConnection.readStatus(input)).isSameAs(PipelinedConnection.OK);
		assertThat(PipelinedConnection.readStatus(input)).isSameAs(PipelinedConnection.OK);
	}

	@Test
	void otherStatusesAreReadAsJedisReadsThem() {
		for (String status : new String[] { "PONG", "OKAY", "O", "OK ", "", "QUEUED", "K" }) {
			String replies = "+" + status + "\r\n:7\r\n";
			RedisInputStream ours = stream(replies);
			RedisInputStream jedis = stream(replies);
			byte[] read = PipelinedConnection.readStatus(ours);
			assertThat(read).as("status '%s'", status)
				.isEqualTo(Protocol.read(jedis))
				.isNotSameAs(PipelinedConnection.OK);
			assertThat(Protocol.read(ours)).as("the reply after '%s'", status).isEqualTo(7L);
		}
	}

	private static RedisInputStream stream(String replies) {
		return new RedisInputStream(new ByteArrayInputStream(replies.getBytes(StandardCharsets.UTF_8)));
	}

}
