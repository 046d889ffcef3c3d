package dev.redlock.core.internal.transport;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

import dev.redlock.test.RedisNode;
import dev.redlock.test.SentinelManagedMaster;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sentinels' questions over kept connections, against a real sentinel: the same
 * connection answers again, one the sentinel closed while it was idle is replaced within
 * the question, and none is kept once closed.
 */
class SentinelQueriesTests {

	private static final String NAME = "sentinel-queries-test";

	private static final Supplier<DefaultJedisClientConfig> CONFIG = () -> DefaultJedisClientConfig.builder()
		.clientName(NAME)
		.timeoutMillis(5000)
		.build();

	@Test
	void asksOverOneKeptConnectionAndReplacesOneTheSentinelClosed() {
		try (SentinelManagedMaster group = SentinelManagedMaster.start("queries", 1, 1);
				SentinelQueries queries = new SentinelQueries()) {
			RedisNode sentinel = group.sentinels().get(0);
			HostAndPort address = new HostAndPort("127.0.0.1", sentinel.port());
			HostAndPort master = new HostAndPort("127.0.0.1", group.master().port());

			assertThat(queries.masterAddress(address, "queries", CONFIG)).isEqualTo(master);
			List<String> first = ourClientIds(sentinel);
			assertThat(first).hasSize(1);
			assertThat(queries.masterAddress(address, "queries", CONFIG)).isEqualTo(master);
			assertThat(ourClientIds(sentinel)).as("asked again over the same connection").isEqualTo(first);

			assertThat(sentinel.command("CLIENT", "KILL", "ID", first.get(0))).isEqualTo("1");
			assertThat(queries.masterAddress(address, "queries", CONFIG)).as("answered over a new connection")
				.isEqualTo(master);
			assertThat(ourClientIds(sentinel)).hasSize(1).doesNotContainAnyElementsOf(first);
			assertThat(queries.masterAddress(address, "no-such-master", CONFIG)).isNull();

			queries.close();
			assertThat(queries.masterAddress(address, "queries", CONFIG)).isEqualTo(master);
			// the server sees a close a moment after it
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			while (!ourClientIds(sentinel).isEmpty() && System.nanoTime() - deadline < 0) {
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
			}
			assertThat(ourClientIds(sentinel)).as("no connection of ours kept after close").isEmpty();
		}
	}

	/** The ids of the sentinel's clients named as ours. */
	private static List<String> ourClientIds(RedisNode sentinel) {
		return sentinel.command("CLIENT", "LIST")
			.lines()
			.filter((client) -> client.contains(" name=" + NAME + " "))
			.map((client) -> client.substring("id=".length(), client.indexOf(' ')))
			.toList();
	}

}
