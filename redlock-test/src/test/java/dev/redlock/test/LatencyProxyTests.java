package dev.redlock.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.time.Duration;

import org.junit.jupiter.api.Test;

@WithRedisNodes(count = 1)
class LatencyProxyTests {

	@Test
	void forwardsToTheNodeWithTheDelayInEachDirection(RedisNodes redis) {
		try (LatencyProxy proxy = LatencyProxy.to(redis.node(0), Duration.ofMillis(60))) {
			assertThat(proxy.host()).isEqualTo("127.0.0.1");
			assertThat(proxy.uri()).isEqualTo("redis://127.0.0.1:" + proxy.port());

			long start = System.nanoTime();
			assertThat(Resp.render(Resp.call(proxy.host(), proxy.port(), Duration.ofSeconds(2), "SET", "k", "v")))
				.isEqualTo("OK");
			Duration roundTrip = Duration.ofNanos(System.nanoTime() - start);

			assertThat(roundTrip).isGreaterThanOrEqualTo(Duration.ofMillis(120));
			assertThat(redis.node(0).command("GET", "k")).isEqualTo("v");
		}
	}

	@Test
	void aShorterDelayAppliesToLaterBytes(RedisNodes redis) {
		// a first delay of seconds: a PING that still got it would take twice that, far
		// longer than a busy machine keeps an undelayed one
		Duration first = Duration.ofSeconds(2);
		try (LatencyProxy proxy = LatencyProxy.to(redis.node(0), first)) {
			proxy.delay(Duration.ZERO);

			long start = System.nanoTime();
			assertThat(Resp.render(Resp.call(proxy.host(), proxy.port(), Duration.ofSeconds(10), "PING")))
				.isEqualTo("PONG");

			assertThat(proxy.delay()).isZero();
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(first);
			assertThatThrownBy(() -> proxy.delay(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class);
		}
	}

	@Test
	void closeStopsListeningAndEveryThread(RedisNodes redis) {
		LatencyProxy proxy = LatencyProxy.to(redis.node(0), Duration.ofMillis(1));
		int port = proxy.port();
		Resp.call(proxy.host(), port, Duration.ofSeconds(2), "PING");

		proxy.close();
		proxy.close();

		assertThat(proxy.openConnections()).isZero();
		assertThat(Thread.getAllStackTraces().keySet())
			.noneMatch(thread -> thread.getName().startsWith("redlock-test-latency-proxy-") && thread.isAlive());
		assertThatThrownBy(() -> Resp.call("127.0.0.1", port, Duration.ofMillis(500), "PING"))
			.isInstanceOf(UncheckedIOException.class);
	}

}
