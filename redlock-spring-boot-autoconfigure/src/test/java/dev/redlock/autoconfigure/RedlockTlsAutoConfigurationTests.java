package dev.redlock.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundleKey;
import org.springframework.boot.ssl.SslOptions;
import org.springframework.boot.ssl.SslStoreBundle;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.redlock.NodeKeys;
import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.Redlock;
import dev.redlock.core.TlsSettings;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.TestCertificates;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code redlock.ssl.bundle} names a Spring Boot SSL bundle whose trust material checks
 * {@code rediss://} nodes, and whose options (enabled protocols and cipher suites) narrow
 * the handshake.
 */
@WithRedisNodes(count = 3, tls = true)
class RedlockTlsAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, RedlockAutoConfiguration.class));

	@Test
	void sslBundleTrustsTheNodesCertificate(RedisNodes nodes) {
		this.runner.withPropertyValues(tlsNodes(nodes))
			.withPropertyValues(
					"spring.ssl.bundle.pem.redis.truststore.certificate=file:" + TestCertificates.get().caCertificate(),
					"redlock.ssl.bundle=redis")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				Redlock redlock = context.getBean(Redlock.class);
				try (Lease lease = redlock.acquire("tls", Duration.ofSeconds(5), Duration.ZERO)) {
					assertThat(lease.isValid()).isTrue();
					// a quorum: the round returned once two nodes had granted it
					assertThat(NodeKeys.holding(nodes, "redlock:tls")).isGreaterThanOrEqualTo(2);
				}
			});
	}

	@Test
	void withoutTheBundleTheSelfSignedCertificateIsRefused(RedisNodes nodes) {
		this.runner.withPropertyValues(tlsNodes(nodes)).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThatExceptionOfType(LockNotAcquiredException.class)
				.isThrownBy(() -> context.getBean(Redlock.class).acquire("tls", Duration.ofSeconds(5), Duration.ZERO))
				// the round ends once a quorum has failed: the last node may be left out
				.satisfies((ex) -> assertThat(ex.failedNodes()).hasSizeBetween(2, 3));
		});
	}

	@Test
	void unknownBundleFailsStartupNamingTheProperty(RedisNodes nodes) {
		this.runner.withPropertyValues(tlsNodes(nodes)).withPropertyValues("redlock.ssl.bundle=nope").run((context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			while (failure != null && !(failure instanceof InvalidRedlockPropertyException)) {
				failure = failure.getCause();
			}
			assertThat(failure).isInstanceOf(InvalidRedlockPropertyException.class)
				.hasMessageContaining("redlock.ssl.bundle")
				.hasMessageContaining("no SSL bundle named 'nope'");
		});
	}

	@Test
	void bundleOptionsWithProtocolsAndCiphersTheNodesAcceptWork(RedisNodes nodes) {
		this.runner.withPropertyValues(tlsNodes(nodes))
			.withPropertyValues(trustingBundle())
			.withPropertyValues("spring.ssl.bundle.pem.redis.options.enabled-protocols=TLSv1.2",
					"spring.ssl.bundle.pem.redis.options.ciphers=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				try (Lease lease = context.getBean(Redlock.class)
					.acquire("tls-options", Duration.ofSeconds(5), Duration.ZERO)) {
					assertThat(lease.isValid()).isTrue();
				}
			});
	}

	@Test
	void bundleOptionsWithAProtocolTheNodesRefuseFailTheHandshakeNamingTheNodes(RedisNodes nodes) {
		assertHandshakeFails(nodes, "spring.ssl.bundle.pem.redis.options.enabled-protocols=TLSv1.1");
	}

	@Test
	void bundleOptionsWithCiphersTheNodesDoNotOfferFailTheHandshakeNamingTheNodes(RedisNodes nodes) {
		// the nodes' key is RSA: they can offer no ECDSA cipher suite
		assertHandshakeFails(nodes, "spring.ssl.bundle.pem.redis.options.enabled-protocols=TLSv1.2",
				"spring.ssl.bundle.pem.redis.options.ciphers=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256");
	}

	@Test
	void bundleOptionsBecomeTheTlsSettings() throws Exception {
		SslBundle bundle = SslBundle.of(SslStoreBundle.NONE, SslBundleKey.NONE,
				SslOptions.of(new String[] { "TLS_AES_256_GCM_SHA384" }, new String[] { "TLSv1.3" }));
		TlsSettings tls = RedlockFactory.tls(bundle);
		assertThat(tls.protocols()).containsExactly("TLSv1.3");
		assertThat(tls.ciphers()).containsExactly("TLS_AES_256_GCM_SHA384");
		assertThat(tls.verifyHostname()).isTrue();
		TlsSettings withoutOptions = RedlockFactory.tls(SslBundle.of(SslStoreBundle.NONE));
		assertThat(withoutOptions.protocols()).isEmpty();
		assertThat(withoutOptions.ciphers()).isEmpty();
	}

	private void assertHandshakeFails(RedisNodes nodes, String... options) {
		this.runner.withPropertyValues(tlsNodes(nodes))
			.withPropertyValues(trustingBundle())
			.withPropertyValues(options)
			// the first handshakes of a JVM can be slow: see them fail, not time out
			.withPropertyValues("redlock.node-timeout=3s")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThatExceptionOfType(LockNotAcquiredException.class)
					.isThrownBy(() -> context.getBean(Redlock.class)
						.acquire("tls-options", Duration.ofSeconds(5), Duration.ZERO))
					.satisfies((ex) -> assertThat(ex.failedNodes()).hasSizeBetween(2, 3)
						.allSatisfy((node) -> assertThat(node).startsWith("rediss://127.0.0.1:")
							.containsAnyOf("handshake", "protocol", "cipher")));
			});
	}

	private static String[] trustingBundle() {
		return new String[] {
				"spring.ssl.bundle.pem.redis.truststore.certificate=file:" + TestCertificates.get().caCertificate(),
				"redlock.ssl.bundle=redis" };
	}

	private static String[] tlsNodes(RedisNodes nodes) {
		List<String> properties = new ArrayList<>();
		for (int i = 0; i < nodes.size(); i++) {
			properties.add("redlock.nodes[" + i + "]=" + nodes.node(i).tlsUri());
		}
		properties.add("redlock.restart-quarantine=0s");
		// TLS handshakes take longer on a loaded machine: single attempts are to succeed
		// or fail for the reason under test, not time out
		properties.add("redlock.node-timeout=1s");
		return properties.toArray(String[]::new);
	}

}
