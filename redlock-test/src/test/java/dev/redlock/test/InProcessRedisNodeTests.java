package dev.redlock.test;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The in-process stand-in answers as a Redis server does for the commands it serves:
 * expiry, {@code SET} options, Lua scripts and their conversions, pub/sub, and a kill or
 * pause.
 */
class InProcessRedisNodeTests {

	private RedisNodes nodes;

	private RedisNode node;

	@BeforeEach
	void start() {
		this.nodes = RedisNodes.startInProcess(1);
		this.node = this.nodes.node(0);
	}

	@AfterEach
	void stop() {
		this.nodes.close();
	}

	@Test
	void setWithItsOptionsAndExpiry() {
		assertThat(this.node.command("SET", "k", "a", "NX", "PX", "150")).isEqualTo("OK");
		assertThat(this.node.command("SET", "k", "b", "NX", "PX", "150")).isNull();
		assertThat(this.node.command("SET", "k", "c", "XX", "GET")).isEqualTo("a");
		assertThat(this.node.command("PTTL", "k")).isEqualTo("-1");
		assertThat(this.node.command("PEXPIRE", "k", "100")).isEqualTo("1");
		assertThat(Long.parseLong(this.node.command("PTTL", "k"))).isBetween(1L, 100L);
		Poll.until("expired", Duration.ofSeconds(5), () -> this.node.command("GET", "k") == null);
		assertThat(this.node.command("PTTL", "k")).isEqualTo("-2");
		assertThat(this.node.command("EXISTS", "k")).isEqualTo("0");
	}

	@Test
	void scriptsSeeKeysAndArgumentsAndConvertRepliesAsRedisDoes() {
		String sha = this.node.command("SCRIPT", "LOAD",
				"return {redis.call('set', KEYS[1], ARGV[1]), "
						+ "redis.call('get', KEYS[1]), redis.call('get', 'missing') == false, 3.9, "
						+ "type(redis.pcall('nosuchcommand')) == 'table'}");
		assertThat(this.node.command("EVALSHA", sha, "1", "key", "value")).isEqualTo("OK\nvalue\n1\n3\n1");
		assertThat(this.node.command("SCRIPT", "EXISTS", sha, "0000")).isEqualTo("1\n0");
		assertThatIllegalStateException().isThrownBy(() -> this.node.command("EVALSHA", "0000", "0"))
			.withMessageStartingWith("NOSCRIPT");
		assertThatIllegalStateException()
			.isThrownBy(() -> this.node.command("EVAL", "return redis.call('nosuchcommand')", "0"))
			.withMessageContaining("unknown command");
		// Redis's Lua formats 64-bit integers
		assertThat(this.node.command("EVAL", "return string.format('%d', 99999999999999 + 2)", "0"))
			.isEqualTo("100000000000001");
	}

	@Test
	void aSubscriberHearsWhatIsPublishedAlsoFromAScript() throws Exception {
		try (Socket subscriber = new Socket(this.node.host(), this.node.port())) {
			OutputStream out = subscriber.getOutputStream();
			InputStream in = subscriber.getInputStream();
			out.write(Resp.encode("SUBSCRIBE", "news"));
			out.flush();
			assertThat(Resp.render(Resp.read(in))).isEqualTo("subscribe\nnews\n1");
			assertThat(this.node.command("PUBSUB", "NUMSUB", "news")).isEqualTo("news\n1");
			assertThat(this.node.command("EVAL", "return redis.pcall('publish', KEYS[1], ARGV[1])", "1", "news",
					"released"))
				.isEqualTo("1");
			subscriber.setSoTimeout(5000);
			assertThat(Resp.render(Resp.read(in))).isEqualTo("message\nnews\nreleased");
			assertThat(this.node.command("CLIENT", "KILL", "TYPE", "pubsub")).isEqualTo("1");
			assertThat(in.read()).isEqualTo(-1);
		}
	}

	@Test
	void aPausedNodeAnswersOnceResumedAndAKilledOneComesBackEmpty() throws Exception {
		this.node.command("SET", "k", "v");
		String runId = runId();
		this.node.pause();
		try (Socket client = new Socket(this.node.host(), this.node.port())) {
			client.getOutputStream().write(Resp.encode("GET", "k"));
			client.getOutputStream().flush();
			InputStream in = client.getInputStream();
			// no answer while paused: the read gives up after its timeout
			client.setSoTimeout(200);
			assertThatExceptionOfType(SocketTimeoutException.class).isThrownBy(in::read);
			this.node.resume();
			client.setSoTimeout(5000);
			assertThat(Resp.render(Resp.read(in))).isEqualTo("v");
		}
		this.node.kill();
		assertThat(this.node.isRunning()).isFalse();
		this.node.restart();
		assertThat(this.node.command("GET", "k")).isNull();
		assertThat(this.node.command("INFO", "server")).contains("redlock_in_process_stand_in:1");
		// a new run of the server, as after a restart of redis-server
		assertThat(runId()).isNotEqualTo(runId);
	}

	private String runId() {
		String info = this.node.command("INFO", "server");
		int at = info.indexOf("run_id:") + "run_id:".length();
		return info.substring(at, info.indexOf('\r', at));
	}

}
