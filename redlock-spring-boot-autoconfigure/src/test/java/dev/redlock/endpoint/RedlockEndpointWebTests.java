package dev.redlock.endpoint;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Configuration;

import dev.redlock.core.Lease;
import dev.redlock.core.LockRequest;
import dev.redlock.core.Redlock;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Over HTTP, {@code show-values=when-authorized} masks the resources for an anonymous
 * caller, though the same endpoint outside the web (JMX) would show them: the web
 * extension decides per caller.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=redlock",
				"management.endpoint.redlock.show-values=when-authorized", "redlock.restart-quarantine=0s" })
@WithRedisNodes(count = 3)
class RedlockEndpointWebTests {

	@LocalServerPort
	private int port;

	@Autowired
	private Redlock redlock;

	@Autowired
	private RedlockEndpoint endpoint;

	@Test
	void anonymousCallerSeesTheLockNameButNotTheResource() throws Exception {
		HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
		try (Lease lease = this.redlock.acquire(
				LockRequest.of("acct:alice@example.com", Duration.ofSeconds(10)).named("account"), Duration.ZERO)) {
			HttpResponse<String> response = http
				.send(HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + "/actuator/redlock"))
					.timeout(Duration.ofSeconds(10))
					.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.body()).contains("\"name\":\"account\"", "\"resource\":\"******\"")
				.doesNotContain("alice");
			assertThat(this.endpoint.redlock().leases()).singleElement()
				.satisfies((held) -> assertThat(held.resource()).isEqualTo("acct:alice@example.com"));
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class TestApplication {

	}

}
