package dev.redlock.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class RedisNodesTests {

	private static RedisNodes redis;

	@BeforeAll
	static void startNodes() {
		redis = RedisNodes.start(3);
	}

	@AfterAll
	static void stopNodes() {
		redis.close();
	}

	@BeforeEach
	void reset() {
		redis.reset();
	}

	static long pid(RedisNode node) {
		assertThat(node).isInstanceOf(ProcessRedisNode.class);
		return ((ProcessRedisNode) node).pid();
	}

	static boolean alive(long pid) {
		return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
	}

	@Test
	void startsThreeIndependentNodesOnLoopback() {
		assertThat(redis.size()).isEqualTo(3);
		assertThat(redis.nodes()).hasSize(3);
		assertThat(redis.backend()).isIn("path", "embedded");
		Set<Integer> ports = new HashSet<>();
		for (int i = 0; i < redis.size(); i++) {
			RedisNode node = redis.node(i);
			ports.add(node.port());
			assertThat(node.host()).isEqualTo("127.0.0.1");
			assertThat(node.uri()).isEqualTo("redis://127.0.0.1:" + node.port());
			assertThat(redis.uris().get(i)).isEqualTo(node.uri());
			assertThat(node.isRunning()).isTrue();
			assertThat(node.isPaused()).isFalse();
			assertThat(node.command("PING")).isEqualTo("PONG");
			assertThat(node.command("SET", "k", "value-" + i)).isEqualTo("OK");
		}
		assertThat(ports).hasSize(3);
		for (int i = 0; i < redis.size(); i++) {
			assertThat(redis.node(i).command("GET", "k")).isEqualTo("value-" + i);
			assertThat(redis.node(i).command("DBSIZE")).isEqualTo("1");
		}
	}

	@Test
	void persistenceIsOff() {
		RedisNode node = redis.node(0);
		assertThat(node.command("CONFIG", "GET", "save")).isEqualTo("save\n");
		assertThat(node.command("CONFIG", "GET", "appendonly")).isEqualTo("appendonly\nno");
		assertThat(node.command("CONFIG", "GET", "bind")).isEqualTo("bind\n127.0.0.1");
	}

	@Test
	void rendersRepliesAsText() {
		RedisNode node = redis.node(1);
		assertThat(node.command("SET", "k", "v", "PX", "60000")).isEqualTo("OK");
		assertThat(Long.parseLong(node.command("PTTL", "k"))).isBetween(1L, 60000L);
		assertThat(node.command("GET", "missing")).isNull();
		assertThat(node.command("SET", "k", "other", "NX")).isNull();
		assertThat(node.command("RPUSH", "list", "a", "b", "ünïcode")).isEqualTo("3");
		assertThat(node.command("LRANGE", "list", "0", "-1")).isEqualTo("a\nb\nünïcode");
		assertThat(node.command("MGET", "k", "missing")).isEqualTo("v\nnull");
		assertThat(node.command("SCRIPT", "FLUSH")).isEqualTo("OK");
		assertThat(node.command("EVAL", "return redis.call('GET', KEYS[1])", "1", "k")).isEqualTo("v");
		assertThatThrownBy(() -> node.command("NOSUCHCOMMAND")).isInstanceOf(IllegalStateException.class)
			.hasMessageContaining("ERR")
			.hasMessageContaining("unknown command");
		assertThatThrownBy(() -> node.command("INCR", "k")).isInstanceOf(IllegalStateException.class)
			.hasMessageContaining("not an integer");
	}

	@Test
	void killMakesTheNodeRefuseConnectionsAndRestartBringsItBackEmptyOnTheSamePort() {
		RedisNode node = redis.node(0);
		int port = node.port();
		long pid = pid(node);
		node.command("SET", "k", "v");

		node.kill();

		assertThat(node.isRunning()).isFalse();
		assertThat(node.isPaused()).isFalse();
		assertThat(alive(pid)).isFalse();
		assertThatThrownBy(() -> node.command("PING")).isInstanceOf(UncheckedIOException.class)
			.hasCauseInstanceOf(ConnectException.class);
		assertThat(redis.node(1).command("PING")).isEqualTo("PONG");
		assertThatCode(node::kill).doesNotThrowAnyException();

		node.restart();

		assertThat(node.isRunning()).isTrue();
		assertThat(node.port()).isEqualTo(port);
		assertThat(pid(node)).isNotEqualTo(pid);
		assertThat(node.command("PING")).isEqualTo("PONG");
		assertThat(node.command("GET", "k")).isNull();
		assertThat(node.command("DBSIZE")).isEqualTo("0");
	}

	@Test
	void restartOfARunningNodeGivesAnEmptyServer() {
		RedisNode node = redis.node(2);
		long pid = pid(node);
		node.command("SET", "k", "v");
		node.restart();
		assertThat(alive(pid)).isFalse();
		assertThat(node.command("DBSIZE")).isEqualTo("0");
	}

	@Test
	void restartAfterASaveGivesAnEmptyServer() {
		RedisNode node = redis.node(2);
		node.command("SET", "saved", "v");
		node.saveSnapshot();
		node.restart();
		// a dump file left in the node's directory would be loaded at start
		assertThat(node.command("DBSIZE")).isEqualTo("0");
	}

	@Test
	void restartOfANodeThatFedAReplicaGivesAnEmptyServer() {
		RedisNode master = redis.node(0);
		RedisNode replica = redis.node(1);
		master.command("SET", "replicated", "v");
		// Redis 6.2 feeds a new replica from a dump file written in the master's
		// directory (repl-diskless-sync no); 7.0 and later feed it from memory, after
		// a delay of 5 s unless told otherwise (the restart below drops the setting)
		master.command("CONFIG", "SET", "repl-diskless-sync-delay", "0");
		replica.command("REPLICAOF", "127.0.0.1", String.valueOf(master.port()));
		try {
			Poll.until("replicated", Duration.ofSeconds(30), () -> "1".equals(replica.command("EXISTS", "replicated")));
		}
		finally {
			replica.command("REPLICAOF", "NO", "ONE");
		}
		master.restart();
		assertThat(master.command("DBSIZE")).isEqualTo("0");
	}

	@Test
	void pauseMakesCommandsTimeOutAndResumeMakesTheNodeAnswerAgain() {
		RedisNode node = redis.node(1);
		node.command("SET", "k", "before-pause");

		node.pause();

		assertThat(node.isRunning()).isTrue();
		assertThat(node.isPaused()).isTrue();
		long start = System.nanoTime();
		assertThatThrownBy(() -> node.command(Duration.ofMillis(200), "GET", "k"))
			.isInstanceOf(UncheckedIOException.class)
			.hasCauseInstanceOf(SocketTimeoutException.class);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
		assertThat(redis.node(0).command("PING")).isEqualTo("PONG");

		node.resume();

		assertThat(node.isPaused()).isFalse();
		assertThat(node.command("GET", "k")).isEqualTo("before-pause");
		assertThatCode(node::resume).doesNotThrowAnyException();
	}

	@Test
	void pauseClientsWriteHoldsWritesButServesReadsUntilUnpaused() {
		RedisNode node = redis.node(2);
		node.command("SET", "k", "before");

		node.pauseClients(Duration.ofSeconds(10), true);

		assertThat(node.isPaused()).isFalse();
		assertThat(node.command(Duration.ofMillis(500), "GET", "k")).isEqualTo("before");
		assertThatThrownBy(() -> node.command(Duration.ofMillis(200), "SET", "k", "held"))
			.isInstanceOf(UncheckedIOException.class)
			.hasCauseInstanceOf(SocketTimeoutException.class);

		node.unpauseClients();

		// the client that gave up hung up, and Redis drops a held command with its client
		assertThat(node.command("GET", "k")).isEqualTo("before");
		assertThat(node.command(Duration.ofMillis(500), "SET", "k", "after")).isEqualTo("OK");
	}

	@Test
	void pauseClientsAllHoldsReadsTooAndLiftsByItself() {
		RedisNode node = redis.node(0);

		long start = System.nanoTime();
		node.pauseClients(Duration.ofMillis(300), false);

		assertThat(node.command(Duration.ofSeconds(2), "PING")).isEqualTo("PONG");
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(250));
		assertThatThrownBy(() -> node.pauseClients(Duration.ZERO, true)).isInstanceOf(IllegalArgumentException.class);
	}

	@Test
	void resetLiftsAClientPause() {
		redis.node(1).pauseClients(Duration.ofMinutes(1), true);

		redis.reset();

		assertThat(redis.node(1).command(Duration.ofMillis(500), "SET", "k", "v")).isEqualTo("OK");
	}

	@Test
	void resetRestartsANodeLeftWithAPasswordOrAsAReplica() {
		redis.node(0).command("CONFIG", "SET", "requirepass", "left-behind");
		redis.node(1).command("REPLICAOF", "127.0.0.1", String.valueOf(redis.node(2).port()));
		List<String> uris = redis.uris();

		redis.reset();

		assertThat(redis.uris()).isEqualTo(uris);
		assertThat(redis.node(0).command("SET", "k", "v")).isEqualTo("OK");
		assertThat(redis.node(1).command("INFO", "replication")).contains("role:master");
		assertThat(redis.node(1).command("SET", "k", "v")).isEqualTo("OK");
	}

	@Test
	void resetResumesRestartsAndFlushes() {
		redis.node(0).kill();
		redis.node(1).pause();
		redis.node(2).command("SET", "k", "v");
		List<String> uris = redis.uris();

		redis.reset();

		assertThat(redis.uris()).isEqualTo(uris);
		for (RedisNode node : redis.nodes()) {
			assertThat(node.isRunning()).isTrue();
			assertThat(node.isPaused()).isFalse();
			assertThat(node.command("DBSIZE")).isEqualTo("0");
		}
	}

	@Test
	void pauseOfAKilledNodeFails() {
		RedisNode node = redis.node(2);
		node.kill();
		assertThatThrownBy(node::pause).isInstanceOf(IllegalStateException.class);
	}

	@Test
	void closeStopsEveryProcessIncludingPausedAndKilledOnesAndIsIdempotent() {
		RedisNodes own = RedisNodes.start(3);
		List<Long> pids = new ArrayList<>();
		for (RedisNode node : own.nodes()) {
			pids.add(pid(node));
		}
		assertThat(pids).allMatch(RedisNodesTests::alive);
		own.node(0).pause();
		own.node(1).kill();

		own.close();

		assertThat(pids).noneMatch(RedisNodesTests::alive);
		for (RedisNode node : own.nodes()) {
			assertThat(node.isRunning()).isFalse();
			assertThatThrownBy(() -> node.command(Duration.ofMillis(500), "PING"))
				.isInstanceOf(UncheckedIOException.class);
		}
		assertThatCode(own::close).doesNotThrowAnyException();
		assertThatThrownBy(own::reset).isInstanceOf(IllegalStateException.class);
	}

	@Test
	void rejectsANonPositiveCount() {
		assertThatThrownBy(() -> RedisNodes.start(0)).isInstanceOf(IllegalArgumentException.class);
	}

}
