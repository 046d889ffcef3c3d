package dev.redlock.endpoint;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.redlock.core.LockRequest;
import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.Redlock;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Node passwords never appear in Actuator's responses or in the log, with every endpoint
 * exposed and every value shown: one node takes a password, one an ACL user, and one is
 * configured with a wrong password so that an authentication error is reported.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=*", "management.endpoint.env.show-values=always",
				"management.endpoint.configprops.show-values=always", "management.endpoint.redlock.show-values=always",
				"management.endpoint.health.show-details=always", "redlock.default-wait-time=0",
				"logging.level.dev.redlock=debug" })
@DirtiesContext
@ExtendWith(OutputCaptureExtension.class)
class ActuatorSecretsIntegrationTests {

	private static final String PASSWORD = "Pa55-for-node-0-and-2";

	private static final String ACL_PASSWORD = "acl-Pa55-of-locker";

	private static final String WRONG_PASSWORD = "wr0ng-Pa55-for-node-2";

	private static final List<String> SECRETS = List.of(PASSWORD, ACL_PASSWORD, WRONG_PASSWORD);

	private static final String REACHABLE_TWO = "\"redlock\":{\"details\":{\"quorum\":2,\"reachable\":2";

	private static RedisNodes nodes;

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@LocalServerPort
	private int port;

	@Autowired
	private Redlock redlock;

	@DynamicPropertySource
	static void nodesWithCredentials(DynamicPropertyRegistry registry) {
		nodes = RedisNodes.start(3);
		RedisNode withPassword = nodes.node(0);
		RedisNode withAclUser = nodes.node(1);
		RedisNode withWrongPassword = nodes.node(2);
		withAclUser.command("ACL", "SETUSER", "locker", "on", ">" + ACL_PASSWORD, "~*", "+@all");
		withPassword.command("CONFIG", "SET", "requirepass", PASSWORD);
		withWrongPassword.command("CONFIG", "SET", "requirepass", PASSWORD);
		// freshly started nodes: a restart quarantine would keep them from counting
		registry.add("redlock.restart-quarantine", () -> "0s");
		registry.add("redlock.nodes[0]", () -> "redis://:" + PASSWORD + "@" + hostAndPort(withPassword));
		registry.add("redlock.nodes[1]", () -> "redis://locker:" + ACL_PASSWORD + "@" + hostAndPort(withAclUser));
		registry.add("redlock.nodes[2]", () -> "redis://:" + WRONG_PASSWORD + "@" + hostAndPort(withWrongPassword));
	}

	@AfterAll
	static void stopNodes() {
		// these nodes are this class's own: the kit cannot talk to them any more, so stop
		// rather than reset them
		nodes.close();
	}

	@Test
	void noResponseAndNoLogLineCarriesAPassword(CapturedOutput output) throws Exception {
		// a check does not wait for the first connections: poll until both good nodes
		// have one and the wrong password has been refused
		String health = awaitBody("/actuator/health",
				(body) -> body.contains(REACHABLE_TWO) && body.contains("WRONGPASS"));
		String redlockWhileHeld;
		try (Lease lease = this.redlock.acquire(LockRequest.of("order:1", Duration.ofSeconds(10)).named("secrets"),
				Duration.ZERO)) {
			redlockWhileHeld = get("/actuator/redlock");
		}
		String configprops = get("/actuator/configprops");
		String env = get("/actuator/env");
		String envNode = get("/actuator/env/redlock.nodes%5B0%5D");
		assertThatExceptionOfType(LockNotAcquiredException.class).isThrownBy(this::acquireWithNodeOneDown);
		String healthAfterFailure = get("/actuator/health");
		String redlock = get("/actuator/redlock");

		// the responses are the real ones: they name the nodes, and show the
		// authentication error
		assertThat(health).contains(REACHABLE_TWO, hostAndPort(nodes.node(2)), "WRONGPASS");
		assertThat(redlockWhileHeld).contains("\"resource\":\"order:1\"", hostAndPort(nodes.node(0)));
		assertThat(configprops).contains("redis://******@" + hostAndPort(nodes.node(0)));
		assertThat(env).contains("redis://******@" + hostAndPort(nodes.node(1)));
		assertThat(envNode).contains("redis://******@" + hostAndPort(nodes.node(0)));
		assertThat(healthAfterFailure).contains(hostAndPort(nodes.node(1)));
		assertThat(redlock).contains("\"errors\":", hostAndPort(nodes.node(2)));
		// and the log is the real one too, at DEBUG, without the evaluated key of the
		// failed acquisition (redlock.observation.include-resource=false may be keeping
		// it out of traces)
		assertThat(output.getAll()).contains("Started ActuatorSecretsIntegrationTests", "Lock not acquired: granted by")
			.doesNotContain("order:2");

		for (String body : List.of(health, redlockWhileHeld, configprops, env, envNode, healthAfterFailure, redlock,
				output.getAll())) {
			assertThat(body).doesNotContain(SECRETS);
		}
	}

	private void acquireWithNodeOneDown() {
		nodes.node(1).kill();
		try {
			this.redlock.acquire(LockRequest.of("order:2", Duration.ofSeconds(10)).named("secrets"), Duration.ZERO)
				.close();
		}
		finally {
			nodes.node(1).restart();
			nodes.node(1).command("ACL", "SETUSER", "locker", "on", ">" + ACL_PASSWORD, "~*", "+@all");
		}
	}

	/** Gets the path until its body matches, for at most 5 s; returns the last body. */
	private String awaitBody(String path, Predicate<String> expected) throws IOException, InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
		String body = get(path);
		while (!expected.test(body) && System.nanoTime() - deadline < 0) {
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
			body = get(path);
		}
		return body;
	}

	private String get(String path) throws IOException, InterruptedException {
		HttpResponse<String> response = this.http
			.send(HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
				.timeout(Duration.ofSeconds(10))
				.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).as("GET %s: %s", path, response.body()).isIn(200, 503);
		return response.body();
	}

	private static String hostAndPort(RedisNode node) {
		return node.host() + ":" + node.port();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class TestApplication {

	}

}
