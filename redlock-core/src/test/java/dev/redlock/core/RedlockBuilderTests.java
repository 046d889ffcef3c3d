package dev.redlock.core;

import java.util.List;

import org.assertj.core.api.ThrowableAssertAlternative;
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
		assertRefused(List.of("redis://127.0.0.1:7001", "redis://:s3cret@127.0.0.1:notaport"), "nodes[1]")
			.satisfies((ex) -> assertThat(ex.getMessage()).doesNotContain("s3cret"));
	}

	@Test
	void refusesTheSameServerListedTwice() {
		assertRefused(List.of("redis://127.0.0.1:7001", "redis://127.0.0.1:7002", "redis://127.0.0.1:7001"), "nodes[2]")
			.withMessageContaining("nodes[0]")
			.withMessageContaining("fake a quorum");
	}

	@Test
	void anotherDatabaseOrHostAliasIsStillTheSameServer() {
		assertRefused(List.of("redis://:s3cret@127.0.0.1:7001/0", "redis://:s3cret@127.0.0.1:7001/1"), "nodes[1]")
			.satisfies((ex) -> assertThat(ex.getMessage()).doesNotContain("s3cret"));
		assertRefused(List.of("redis://localhost:7001", "redis://127.0.0.1:7001"), "nodes[1]");
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

	/** Asserts that the builder refuses the nodes, naming the setting at fault. */
	private static ThrowableAssertAlternative<InvalidRedlockConfigurationException> assertRefused(List<String> nodes,
			String setting) {
		return assertThatExceptionOfType(InvalidRedlockConfigurationException.class)
			.isThrownBy(() -> Redlock.builder().nodes(nodes).build())
			.satisfies((ex) -> assertThat(ex.setting()).isEqualTo(setting));
	}

	private static Redlock build(int nodes) {
		Redlock.Builder builder = Redlock.builder();
		for (int i = 0; i < nodes; i++) {
			builder.node("redis://127.0.0.1:" + (7001 + i));
		}
		return builder.build();
	}

}
