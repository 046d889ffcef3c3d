package dev.redlock.core.internal.transport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class RedisNodeUriTests {

	@Test
	void parsesHostAndPort() {
		RedisNodeUri uri = RedisNodeUri.parse("redis://localhost:6380");
		assertThat(uri.host()).isEqualTo("localhost");
		assertThat(uri.port()).isEqualTo(6380);
		assertThat(uri.tls()).isFalse();
		assertThat(uri.user()).isNull();
		assertThat(uri.password()).isNull();
		assertThat(uri.database()).isZero();
	}

	@Test
	void defaultsToPort6379() {
		assertThat(RedisNodeUri.parse("redis://10.0.0.5").port()).isEqualTo(6379);
	}

	@Test
	void parsesUserPasswordDatabaseAndTls() {
		RedisNodeUri uri = RedisNodeUri.parse("rediss://app:s3cret@redis.example:6390/3");
		assertThat(uri.tls()).isTrue();
		assertThat(uri.user()).isEqualTo("app");
		assertThat(uri.password()).isEqualTo("s3cret");
		assertThat(uri.database()).isEqualTo(3);
	}

	@Test
	void passwordWithoutUser() {
		RedisNodeUri uri = RedisNodeUri.parse("redis://:s3cret@h:1");
		assertThat(uri.user()).isNull();
		assertThat(uri.password()).isEqualTo("s3cret");
		assertThat(RedisNodeUri.parse("redis://s3cret@h:1").password()).isEqualTo("s3cret");
	}

	@Test
	void toStringHidesCredentials() {
		RedisNodeUri uri = RedisNodeUri.parse("rediss://app:s3cret@redis.example:6390/3");
		assertThat(uri.toString()).isEqualTo("rediss://redis.example:6390/3").doesNotContain("s3cret", "app");
		assertThat(uri.redacted()).isEqualTo(uri.toString());
	}

	@Test
	void ipv6LiteralKeepsBrackets() {
		assertThat(RedisNodeUri.parse("redis://[::1]:7000").redacted()).isEqualTo("redis://[::1]:7000");
	}

	@ParameterizedTest
	@ValueSource(strings = { "http://h:1", "localhost:6379", "redis://", "redis://h:1/x", "redis://h:1?timeout=1",
			"redis://h:99999", "redis://bad host:1", "" })
	void rejectsMalformedUris(String text) {
		assertThatIllegalArgumentException().isThrownBy(() -> RedisNodeUri.parse(text));
	}

	@ParameterizedTest
	@ValueSource(strings = { "redis://user:s3cret@bad host:1", "redis://:s3cret@h:1/db", "http://u:s3cret@h:1",
			"redis://u:s3cret@h:1?x=1", "redis://u:s3cret@:1", "redis://:ab/s3cret@h:x", "redis://:p@s3cret@h:x",
			"redis://u:s3cret@h:1/s3cret@db" })
	void errorsNeverShowThePassword(String text) {
		assertThatIllegalArgumentException().isThrownBy(() -> RedisNodeUri.parse(text))
			.satisfies((ex) -> assertThat(ex.getMessage()).doesNotContain("s3cret").contains("****"));
	}

}
