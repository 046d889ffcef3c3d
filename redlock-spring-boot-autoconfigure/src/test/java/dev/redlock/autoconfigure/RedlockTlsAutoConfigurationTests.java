package dev.redlock.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.Redlock;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.TestCertificates;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code redlock.ssl.bundle} names a Spring Boot SSL bundle whose trust material checks
 * {@code rediss://} nodes.
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
					assertThat(nodes.node(1).command("EXISTS", "redlock:tls")).isEqualTo("1");
				}
			});
	}

	@Test
	void withoutTheBundleTheSelfSignedCertificateIsRefused(RedisNodes nodes) {
		this.runner.withPropertyValues(tlsNodes(nodes)).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThatExceptionOfType(LockNotAcquiredException.class)
				.isThrownBy(() -> context.getBean(Redlock.class).acquire("tls", Duration.ofSeconds(5), Duration.ZERO))
				.satisfies((ex) -> assertThat(ex.failedNodes()).hasSize(3));
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

	private static String[] tlsNodes(RedisNodes nodes) {
		List<String> properties = new ArrayList<>();
		for (int i = 0; i < nodes.size(); i++) {
			properties.add("redlock.nodes[" + i + "]=" + nodes.node(i).tlsUri());
		}
		properties.add("redlock.restart-quarantine=0s");
		properties.add("redlock.node-timeout=300ms");
		return properties.toArray(String[]::new);
	}

}
