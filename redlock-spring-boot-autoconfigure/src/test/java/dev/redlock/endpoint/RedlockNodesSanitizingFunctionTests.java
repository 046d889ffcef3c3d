package dev.redlock.endpoint;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.SanitizableData;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.PropertySource;

import static org.assertj.core.api.Assertions.assertThat;

class RedlockNodesSanitizingFunctionTests {

	private static final PropertySource<?> SOURCE = new MapPropertySource("test", Map.of());

	private final RedlockNodesSanitizingFunction function = new RedlockNodesSanitizingFunction();

	@Test
	void masksPasswordAndUserButKeepsHostPortAndDatabase() {
		assertThat(sanitize("redlock.nodes[0]", "redis://:hunter2@10.0.0.5:6380/2"))
			.isEqualTo("redis://******@10.0.0.5:6380/2");
		assertThat(sanitize("redlock.nodes[1]", "rediss://locker:s3cret@redis-b.internal:6379"))
			.isEqualTo("rediss://******@redis-b.internal:6379");
	}

	@Test
	void masksPasswordsHoldingAtSignsAndSlashesWhole() {
		assertThat(sanitize("redlock.nodes[0]", "redis://u:p@ss/w@rd@10.0.0.5:6379"))
			.isEqualTo("redis://******@10.0.0.5:6379");
	}

	@Test
	void leavesUrisWithoutCredentialsAlone() {
		assertThat(sanitize("redlock.nodes[0]", "redis://10.0.0.5:6379")).isEqualTo("redis://10.0.0.5:6379");
	}

	@Test
	void masksEveryUriOfACommaSeparatedValue() {
		assertThat(sanitize("redlock.nodes", "redis://:a1@h1:1, redis://h2:2,rediss://u:b2@h3:3"))
			.isEqualTo("redis://******@h1:1, redis://h2:2,rediss://******@h3:3");
	}

	@Test
	void masksEveryElementOfAList() {
		assertThat(sanitize("redlock.nodes", List.of("redis://:a1@h1:1", "redis://h2:2")))
			.isEqualTo(List.of("redis://******@h1:1", "redis://h2:2"));
	}

	@Test
	void appliesToEnvironmentVariableForms() {
		assertThat(sanitize("REDLOCK_NODES_0_", "redis://:a1@h1:1")).isEqualTo("redis://******@h1:1");
		assertThat(sanitize("REDLOCK_NODES", "redis://:a1@h1:1")).isEqualTo("redis://******@h1:1");
	}

	@Test
	void touchesOnlyRedlockNodes() {
		assertThat(this.function.filter().test(data("spring.data.redis.url", "redis://:a1@h1:1"))).isFalse();
		assertThat(this.function.filter().test(data("redlock.nodesx", "redis://:a1@h1:1"))).isFalse();
		assertThat(this.function.filter().test(data("redlock.key-prefix", "x"))).isFalse();
		assertThat(this.function.filter().test(data("redlock.nodes[3]", "redis://:a1@h1:1"))).isTrue();
	}

	@Test
	void keepsNullValues() {
		assertThat(this.function.applyUnlessFiltered(data("redlock.nodes[0]", null)).getValue()).isNull();
	}

	private Object sanitize(String key, Object value) {
		return this.function.applyUnlessFiltered(data(key, value)).getValue();
	}

	private static SanitizableData data(String key, Object value) {
		return new SanitizableData(SOURCE, key, value);
	}

}
