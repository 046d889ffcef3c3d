package dev.redlock.core;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class RedlockBuilderTests {

	@Test
	void refusesNoNodes() {
		assertThatExceptionOfType(InvalidRedlockConfigurationException.class)
			.isThrownBy(() -> Redlock.builder().build())
			.satisfies((ex) -> assertThat(ex.setting()).isEqualTo("nodes"));
	}

	@Test
	void refusesMalformedUriNamingItsIndexWithoutPassword() {
		assertThatExceptionOfType(InvalidRedlockConfigurationException.class)
			.isThrownBy(() -> Redlock.builder()
				.nodes(List.of("redis://127.0.0.1:7001", "redis://:s3cret@127.0.0.1:notaport"))
				.build())
			.satisfies((ex) -> assertThat(ex.setting()).isEqualTo("nodes[1]"))
			.satisfies((ex) -> assertThat(ex.getMessage()).doesNotContain("s3cret"));
	}

	@Test
	void refusesTheSameServerListedTwice() {
		assertThatExceptionOfType(InvalidRedlockConfigurationException.class)
			.isThrownBy(() -> Redlock.builder()
				.nodes(List.of("redis://127.0.0.1:7001", "redis://127.0.0.1:7002", "redis://127.0.0.1:7001"))
				.build())
			.satisfies((ex) -> assertThat(ex.setting()).isEqualTo("nodes[2]"))
			.withMessageContaining("nodes[0]")
			.withMessageContaining("fake a quorum");
	}

	@Test
	void anotherDatabaseOrHostAliasIsStillTheSameServer() {
		assertThatExceptionOfType(InvalidRedlockConfigurationException.class)
			.isThrownBy(() -> Redlock.builder()
				.nodes(List.of("redis://:s3cret@127.0.0.1:7001/0", "redis://:s3cret@127.0.0.1:7001/1"))
				.build())
			.satisfies((ex) -> assertThat(ex.setting()).isEqualTo("nodes[1]"))
			.satisfies((ex) -> assertThat(ex.getMessage()).doesNotContain("s3cret"));
		assertThatExceptionOfType(InvalidRedlockConfigurationException.class).isThrownBy(
				() -> Redlock.builder().nodes(List.of("redis://localhost:7001", "redis://127.0.0.1:7001")).build());
	}

	@Test
	void quorumIsMajority() {
		try (Redlock one = build(1); Redlock three = build(3); Redlock four = build(4); Redlock five = build(5)) {
			assertThat(one.quorum()).isEqualTo(1);
			assertThat(three.quorum()).isEqualTo(2);
			assertThat(four.quorum()).isEqualTo(3);
			assertThat(five.quorum()).isEqualTo(3);
		}
	}

	@Test
	void nodeAddressesHideCredentials() {
		try (Redlock redlock = Redlock.builder().node("redis://app:s3cret@127.0.0.1:7001/2").build()) {
			assertThat(redlock.nodeAddresses()).containsExactly("redis://127.0.0.1:7001/2");
			assertThat(redlock.toString()).doesNotContain("s3cret");
		}
	}

	private static Redlock build(int nodes) {
		Redlock.Builder builder = Redlock.builder();
		for (int i = 0; i < nodes; i++) {
			builder.node("redis://127.0.0.1:" + (7001 + i));
		}
		return builder.build();
	}

}
