package dev.redlock.core.internal.transport;

import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.redlock.core.TlsSettings;
import dev.redlock.core.internal.quarantine.NodeQuarantine;
import dev.redlock.core.internal.quarantine.QuarantineGreeting;
import dev.redlock.core.internal.round.NodeReply;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisConnectionException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a round reports for a node it leaves out without trying it, made again on every
 * round while the node is slow or in its back-off: the right kind of failure, the failure
 * behind a back-off as its cause, and no stack trace of its own (filling one in was most
 * of what a slow or dead node cost each round). Pure logic: no connection is attempted.
 */
class NodeLeftOutTests {

	private static final RedisNodeUri NODE = RedisNodeUri.parse("redis://127.0.0.1:7001");

	private final NodeConnector connector = new NodeConnector(NODE, "test", TlsSettings.jvmDefault(),
			new QuarantineGreeting(new NodeQuarantine(NODE, Duration.ZERO)), TimeUnit.SECONDS.toNanos(30), 1_000);

	@AfterEach
	void stopConnector() {
		this.connector.shutdown();
	}

	@Test
	void aSlowNodeLeftOutCountsAsTimedOutWithoutStackTrace() {
		NodeReply reply = NodeReply.notWritten(3, NodeLeftOutException.asTimedOut("not waited for: slow"), 0);

		assertThat(reply.kind()).isEqualTo(NodeReply.Kind.TIMEOUT);
		assertThat(reply.written()).isFalse();
		assertThat(reply.error()).hasMessage("not waited for: slow");
		assertThat(reply.error().getStackTrace()).isEmpty();
		assertThat(reply.error().getCause()).isInstanceOf(SocketTimeoutException.class);
		assertThat(reply.error().getCause().getStackTrace()).isEmpty();
	}

	@Test
	void aNodeInItsBackOffIsReportedWithTheFailedAttemptAsCauseAndNoStackTraceOfItsOwn() {
		assertThat(this.connector.downFailure()).isNull();
		JedisConnectionException refused = new JedisConnectionException("Failed to connect to 127.0.0.1:7001",
				new ConnectException("Connection refused"));
		this.connector.failed(refused);

		JedisConnectionException down = this.connector.downFailure();

		assertThat(down).isNotNull();
		assertThat(down.getMessage()).startsWith("not retried for another ")
			.endsWith(" ms after a failed connection attempt: Failed to connect to 127.0.0.1:7001");
		assertThat(down.getStackTrace()).isEmpty();
		assertThat(down.getCause()).isSameAs(refused);
		assertThat(refused.getStackTrace()).isNotEmpty();
		assertThat(NodeReply.notWritten(0, down, 0).kind()).isEqualTo(NodeReply.Kind.UNREACHABLE);
	}

	@Test
	void aNodeThatRefusedOurCredentialsIsReportedAsSuchDuringItsBackOff() {
		JedisAccessControlException wrongPass = new JedisAccessControlException("WRONGPASS invalid password");
		this.connector.failed(new AuthenticationFailedException("authentication failed: WRONGPASS", wrongPass));

		JedisConnectionException down = this.connector.downFailure();

		assertThat(down).isInstanceOf(AuthenticationFailedException.class);
		assertThat(down.getStackTrace()).isEmpty();
		assertThat(down.getCause().getCause()).isSameAs(wrongPass);
		assertThat(wrongPass.getStackTrace()).isNotEmpty();
		assertThat(NodeReply.notWritten(0, down, 0).kind()).isEqualTo(NodeReply.Kind.AUTH_FAILED);
	}

}
