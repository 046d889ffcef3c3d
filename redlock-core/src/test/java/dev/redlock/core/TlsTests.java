package dev.redlock.core;

import java.io.InputStream;
import java.nio.file.Files;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.List;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

import org.junit.jupiter.api.Test;

import dev.redlock.core.LockNotAcquiredException.Reason;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.TestCertificates;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code rediss://} nodes with a self-signed certificate, trusted through
 * {@link TlsSettings}.
 */
@WithRedisNodes(count = 3, tls = true)
class TlsTests {

	private static final Duration NODE_TIMEOUT = Duration.ofMillis(300);

	private final RedlockSettings settings = TestSupport.SETTINGS.withNodeTimeout(NODE_TIMEOUT);

	@Test
	void locksOverTlsWithTheNodesCaTrusted(RedisNodes nodes) throws Exception {
		try (Redlock redlock = Redlock.builder()
			.nodes(tlsUris(nodes))
			.settings(this.settings)
			.tls(TlsSettings.of(trusting(TestCertificates.get())))
			.build()) {
			try (Lease lease = redlock.acquire("tls", Duration.ofSeconds(5), Duration.ZERO)) {
				assertThat(lease.isValid()).isTrue();
				// the round returns once a quorum granted: the last node follows a moment
				// later
				assertThat(nodes.nodes().stream().filter((node) -> "1".equals(node.command("EXISTS", "redlock:tls"))))
					.hasSizeGreaterThanOrEqualTo(redlock.quorum());
			}
			TestSupport.awaitNoKeys(nodes);
			assertThat(redlock.nodeAddresses()).allSatisfy((address) -> assertThat(address).startsWith("rediss://"));
		}
	}

	@Test
	void untrustedCertificateFailsNamingTheNodes(RedisNodes nodes) {
		// The JVM's first TLS handshake loads its default trust store and providers,
		// which took longer than 300 ms on JDK 25 in CI: the patient builder gives the
		// failure time to be seen as what it is, not as a timeout (nothing here measures
		// time).
		assertFailsNamingTheNodes(nodes, patientBuilder(nodes), "tls", "certification path", "PKIX", "certificate");
	}

	@Test
	void plaintextToTheTlsPortFailsWithinTheNodeTimeout(RedisNodes nodes) {
		List<String> plain = nodes.nodes().stream().map((node) -> "redis://127.0.0.1:" + node.tlsPort()).toList();
		try (Redlock redlock = Redlock.builder().nodes(plain).settings(this.settings).build()) {
			long start = System.nanoTime();
			assertThatExceptionOfType(LockNotAcquiredException.class)
				.isThrownBy(() -> redlock.acquire("tls", Duration.ofSeconds(5), Duration.ZERO))
				.satisfies((ex) -> assertThat(ex.reason()).isEqualTo(Reason.NO_QUORUM))
				.satisfies((ex) -> assertThat(ex.failedNodes()).hasSize(3));
			assertThat(Duration.ofNanos(System.nanoTime() - start))
				.isLessThan(NODE_TIMEOUT.multipliedBy(3).plus(Duration.ofMillis(500)));
		}
	}

	@Test
	void locksWithTheProtocolsAndCiphersTheNodesAccept(RedisNodes nodes) throws Exception {
		TlsSettings trusted = TlsSettings.of(trusting(TestCertificates.get()));
		for (TlsSettings tls : List.of(trusted.withProtocols("TLSv1.3"),
				trusted.withProtocols("TLSv1.2").withCiphers("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"))) {
			try (Redlock redlock = Redlock.builder()
				.nodes(tlsUris(nodes))
				.settings(this.settings.withNodeTimeout(Duration.ofSeconds(3)))
				.tls(tls)
				.build()) {
				try (Lease lease = redlock.acquire("tls-options", Duration.ofSeconds(5), Duration.ZERO)) {
					assertThat(lease.isValid()).as("%s %s", tls.protocols(), tls.ciphers()).isTrue();
				}
			}
		}
	}

	@Test
	void aProtocolTheNodesRefuseFailsTheHandshakeNamingTheNodes(RedisNodes nodes) throws Exception {
		// TLSv1.1: refused on both ends (the JDK disables it; the nodes speak TLSv1.2+)
		assertHandshakeFails(nodes, TlsSettings.of(trusting(TestCertificates.get())).withProtocols("TLSv1.1"));
	}

	@Test
	void aCipherTheNodesDoNotOfferFailsTheHandshakeNamingTheNodes(RedisNodes nodes) throws Exception {
		// the nodes' key is RSA: they can offer no ECDSA cipher suite, so they abort
		assertHandshakeFails(nodes,
				TlsSettings.of(trusting(TestCertificates.get()))
					.withProtocols("TLSv1.2")
					.withCiphers("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"));
	}

	@Test
	void protocolAndCipherNamesAreChecked() throws Exception {
		TlsSettings tls = TlsSettings.of(trusting(TestCertificates.get()));
		assertThat(tls.protocols()).isEmpty();
		assertThat(tls.ciphers()).isEmpty();
		assertThat(tls.withProtocols(" TLSv1.3 ").withCiphers("TLS_AES_128_GCM_SHA256").protocols())
			.containsExactly("TLSv1.3");
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> tls.withProtocols("TLSv1.3", " "))
			.withMessageContaining("protocols");
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> tls.withCiphers(""))
			.withMessageContaining("ciphers");
		assertThat(new TlsSettings(tls.socketFactory(), false).sslParameters()).isNull();
		assertThat(tls.withProtocols("TLSv1.2").withCiphers("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256").sslParameters())
			.satisfies((parameters) -> {
				assertThat(parameters.getEndpointIdentificationAlgorithm()).isEqualTo("HTTPS");
				assertThat(parameters.getProtocols()).containsExactly("TLSv1.2");
				assertThat(parameters.getCipherSuites()).containsExactly("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
			});
	}

	private void assertHandshakeFails(RedisNodes nodes, TlsSettings tls) {
		assertFailsNamingTheNodes(nodes, patientBuilder(nodes).tls(tls), "tls-options", "handshake", "protocol",
				"cipher");
	}

	/**
	 * A builder for the TLS nodes with a node timeout long enough that a failed handshake
	 * is seen as what it is, not as a timeout.
	 */
	private Redlock.Builder patientBuilder(RedisNodes nodes) {
		return Redlock.builder().nodes(tlsUris(nodes)).settings(this.settings.withNodeTimeout(Duration.ofSeconds(3)));
	}

	/**
	 * Asserts that no quorum can be reached and that the failed nodes are named, each
	 * with one of the causes, and that nothing was locked.
	 */
	private static void assertFailsNamingTheNodes(RedisNodes nodes, Redlock.Builder builder, String resource,
			String... causes) {
		try (Redlock redlock = builder.build()) {
			assertThatExceptionOfType(LockNotAcquiredException.class)
				.isThrownBy(() -> redlock.acquire(resource, Duration.ofSeconds(5), Duration.ZERO))
				.satisfies((ex) -> {
					assertThat(ex.reason()).isEqualTo(Reason.NO_QUORUM);
					// the round ends once no quorum is left: two failures of three; the
					// third may not have been read
					assertThat(ex.failedNodes()).hasSizeBetween(2, 3)
						.allSatisfy((node) -> assertThat(node).startsWith("rediss://127.0.0.1:").containsAnyOf(causes));
				});
			assertThat(nodes.node(0).command("EXISTS", "redlock:" + resource)).isEqualTo("0");
		}
	}

	private static List<String> tlsUris(RedisNodes nodes) {
		return nodes.nodes().stream().map(RedisNode::tlsUri).toList();
	}

	/** An SSL context that trusts the kit's test CA, read from its PEM file. */
	static SSLContext trusting(TestCertificates certificates) throws Exception {
		KeyStore trustStore = KeyStore.getInstance(KeyStore.getDefaultType());
		trustStore.load(null, null);
		try (InputStream pem = Files.newInputStream(certificates.caCertificate())) {
			Certificate ca = CertificateFactory.getInstance("X.509").generateCertificate(pem);
			trustStore.setCertificateEntry("redlock-test-ca", ca);
		}
		TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
		trust.init(trustStore);
		SSLContext context = SSLContext.getInstance("TLS");
		context.init(null, trust.getTrustManagers(), null);
		return context;
	}

}
