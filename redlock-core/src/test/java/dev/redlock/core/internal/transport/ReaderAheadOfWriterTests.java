package dev.redlock.core.internal.transport;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.redlock.core.internal.protocol.LockCommands;
import dev.redlock.core.internal.protocol.LockScripts;
import dev.redlock.core.internal.protocol.RawArgument;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Protocol.Command;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A shared connection's reader waits for the next reply before the caller whose call it
 * is has encoded it: the reply is still read as what was sent, a call in its native form
 * as the script's reply. Needs servers with the native commands
 * (redlock-test/servers.sh).
 */
@Tag("newer-servers")
class ReaderAheadOfWriterTests {

	private static final RawArgument KEY = RawArgument.of("redlock:ahead");

	private static final RawArgument VALUE = RawArgument.of("ours");

	@ParameterizedTest(name = "{0}")
	@CsvSource({ "redis-8.6, DELEX", "valkey-9.1, DELIFEQ" })
	void aNativeCallIsReadAsTheScriptsReplyByAReaderThatWaitedBeforeItWasSent(String server, LockCommands commands)
			throws Exception {
		Path binary = RedisNodes.preparedServer(server);
		try (RedisNodes nodes = RedisNodes.startServers(List.of(binary))) {
			RedisNode node = nodes.node(0);
			node.command("SET", "redlock:ahead", "ours", "PX", "60000");
			PipelinedConnection connection = new PipelinedConnection(new HostAndPort(node.host(), node.port()),
					DefaultJedisClientConfig.builder().socketTimeoutMillis(30_000).build());
			try {
				connection.greeted(commands, new NodeCommands(node.uri()));
				CompletableFuture<Object> reply = new CompletableFuture<>();
				Thread reader = new Thread(() -> {
					try {
						reply.complete(connection.readReply());
					}
					catch (Throwable ex) {
						reply.completeExceptionally(ex);
					}
				}, "ahead-reader");
				reader.setDaemon(true);
				reader.start();
				awaitWaitingForBytes(reader);
				connection.send(LockScripts.call(Command.EVALSHA, LockScripts.EXTEND.sha1(), KEY, VALUE,
						RawArgument.of(30_000)));
				connection.flushNow();
				// extended: the script's 1, not the value SET … GET answered
				assertThat(reply.get(30, TimeUnit.SECONDS)).isEqualTo(1L);
				assertThat(connection.isReusable()).as("no reply owed").isTrue();
			}
			finally {
				connection.abort();
			}
		}
	}

	/** Polls until the thread blocks reading a socket for bytes that are not there. */
	private static void awaitWaitingForBytes(Thread reader) {
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		while (System.nanoTime() - deadline < 0) {
			for (StackTraceElement frame : reader.getStackTrace()) {
				if (frame.getClassName().equals("redis.clients.jedis.util.RedisInputStream")
						&& frame.getMethodName().equals("ensureFill")) {
					return;
				}
			}
			LockSupport.parkNanos(1_000_000);
		}
		throw new AssertionError("the reader never waited for a reply");
	}

}
