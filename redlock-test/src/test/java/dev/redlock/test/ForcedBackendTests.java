package dev.redlock.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Starts nodes with the backend forced through the system property. */
class ForcedBackendTests {

	@AfterEach
	void clearProperty() {
		System.clearProperty(RedisNodes.BACKEND_PROPERTY);
	}

	@Test
	void embeddedBackendRunsTheBundledBinary() {
		System.setProperty(RedisNodes.BACKEND_PROPERTY, "embedded");
		try (RedisNodes redis = RedisNodes.start(2)) {
			assertThat(redis.backend()).isEqualTo("embedded");
			assertThat(redis.node(0).command("INFO", "server")).contains("redis_version:6.2.");
			assertThat(redis.node(1).command("SET", "k", "v")).isEqualTo("OK");
			assertThat(redis.node(1).command("GET", "k")).isEqualTo("v");
			redis.node(0).kill();
			redis.node(0).restart();
			assertThat(redis.node(0).command("PING")).isEqualTo("PONG");
		}
	}

	/**
	 * Passes with and without a redis-server on PATH: whichever case this machine is in
	 * is checked.
	 */
	@Test
	void pathBackendUsesRedisServerOnPathOrExplainsHowToGetOne() {
		System.setProperty(RedisNodes.BACKEND_PROPERTY, "path");
		Path onPath = Backends.findOnPath(System.getenv("PATH"));
		if (onPath == null) {
			assertThatThrownBy(() -> RedisNodes.start(1)).isInstanceOf(IllegalStateException.class)
				.hasMessageContaining("no redis-server on PATH")
				.hasMessageContaining("apt-get install redis-server");
		}
		else {
			try (RedisNodes redis = RedisNodes.start(2)) {
				assertThat(redis.backend()).isEqualTo("path");
				assertThat(redis.node(0).command("INFO", "server")).contains("redis_version:");
				assertThat(redis.node(1).command("SET", "k", "v")).isEqualTo("OK");
				redis.node(1).pause();
				redis.node(1).resume();
				assertThat(redis.node(1).command("GET", "k")).isEqualTo("v");
			}
		}
	}

	@Test
	void unknownBackendIsRejected() {
		System.setProperty(RedisNodes.BACKEND_PROPERTY, "kubernetes");
		assertThatThrownBy(() -> RedisNodes.start(1)).isInstanceOf(IllegalStateException.class)
			.hasMessageContaining("kubernetes");
	}

}
