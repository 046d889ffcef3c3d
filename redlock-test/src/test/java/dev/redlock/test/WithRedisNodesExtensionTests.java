package dev.redlock.test;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

@WithRedisNodes(count = 2)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class WithRedisNodesExtensionTests {

	private static RedisNodes fromBeforeAll;

	private final RedisNodes fromConstructor;

	WithRedisNodesExtensionTests(RedisNodes redis) {
		this.fromConstructor = redis;
	}

	@BeforeAll
	static void captureNodes(RedisNodes redis) {
		fromBeforeAll = redis;
	}

	@BeforeEach
	void seed(RedisNodes redis) {
		assertThat(redis.node(0).command("DBSIZE")).isEqualTo("0");
		redis.node(0).command("SET", "seeded", "yes");
	}

	@Test
	@Order(1)
	void injectsTheSameNodesEverywhere(RedisNodes redis) {
		assertThat(redis.size()).isEqualTo(2);
		assertThat(redis).isSameAs(fromBeforeAll).isSameAs(fromConstructor);
		assertThat(redis.node(0).command("GET", "seeded")).isEqualTo("yes");
	}

	@Test
	@Order(2)
	void breakEverything(RedisNodes redis) {
		redis.node(1).command("SET", "leftover", "x");
		redis.node(0).kill();
		redis.node(1).pause();
	}

	@Test
	@Order(3)
	void eachTestStartsWithRunningUnpausedEmptyNodes(RedisNodes redis) {
		for (RedisNode node : redis.nodes()) {
			assertThat(node.isRunning()).isTrue();
			assertThat(node.isPaused()).isFalse();
		}
		assertThat(redis.node(1).command("DBSIZE")).isEqualTo("0");
		assertThat(redis.node(0).command("DBSIZE")).isEqualTo("1"); // only what
																	// @BeforeEach seeded
	}

	@Nested
	class Inner {

		@Test
		void sharesTheOuterClassNodes(RedisNodes redis) {
			assertThat(redis).isSameAs(fromBeforeAll);
			assertThat(redis.node(0).command("GET", "seeded")).isEqualTo("yes");
		}

	}

}
