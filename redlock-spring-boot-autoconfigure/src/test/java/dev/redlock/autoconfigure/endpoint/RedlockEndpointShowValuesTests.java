package dev.redlock.autoconfigure.endpoint;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import com.jayway.jsonpath.JsonPath;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.redlock.autoconfigure.RedlockAutoConfiguration;
import dev.redlock.core.Lease;
import dev.redlock.core.LockRequest;
import dev.redlock.core.Redlock;
import dev.redlock.endpoint.RedlockEndpoint;
import dev.redlock.endpoint.RedlockEndpoint.LeaseDescriptor;
import dev.redlock.endpoint.RedlockEndpoint.RedlockDescriptor;
import dev.redlock.endpoint.RedlockEndpointWebExtension;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * {@code management.endpoint.redlock.show-values} and {@code roles}: the leases'
 * resources are masked unless shown, by the rules of Boot's {@code env} endpoint, while
 * holding a real lease on three Redis nodes.
 */
@WithRedisNodes(count = 3)
class RedlockEndpointShowValuesTests {

	private static final String RESOURCE = "acct:alice@example.com";

	private static final String SHOW_VALUES = "management.endpoint.redlock.show-values=";

	private static final String ROLES = "management.endpoint.redlock.roles=";

	// a node timeout of 1 s: the single attempt must hear from a quorum within it on a
	// loaded machine
	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(RedlockAutoConfiguration.class, RedlockEndpointAutoConfiguration.class))
		.withPropertyValues("management.endpoints.web.exposure.include=redlock", "redlock.restart-quarantine=0s",
				"redlock.node-timeout=1s");

	static Stream<Arguments> showValuesAndRoles() {
		return Stream.of(
				arguments("never is the default and masks the resource even for an authorized user", List.of(),
						List.of(), List.of(Viewer.OPERATOR, Viewer.ANONYMOUS, Viewer.JMX)),
				arguments("never masks the resource even for a user in a role",
						List.of(SHOW_VALUES + "never", ROLES + "OPS"), List.of(),
						List.of(Viewer.OPERATOR, Viewer.ANONYMOUS, Viewer.JMX)),
				arguments("always shows the resource to anyone", List.of(SHOW_VALUES + "always"),
						List.of(Viewer.ANONYMOUS, Viewer.DEVELOPER, Viewer.JMX), List.of()),
				// outside the web (JMX) there is no user: shown, as by Boot's env
				// endpoint
				arguments("when-authorized shows the resource to a user in a role only",
						List.of(SHOW_VALUES + "when-authorized", ROLES + "OPS"), List.of(Viewer.OPERATOR, Viewer.JMX),
						List.of(Viewer.ANONYMOUS, Viewer.DEVELOPER)),
				arguments("when-authorized without roles shows the resource to any authenticated user",
						List.of(SHOW_VALUES + "when-authorized"), List.of(Viewer.DEVELOPER),
						List.of(Viewer.ANONYMOUS)));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource
	void showValuesAndRoles(String rule, List<String> properties, List<Viewer> shownTo, List<Viewer> maskedFrom,
			RedisNodes nodes) {
		List<String> all = new ArrayList<>(properties);
		for (int i = 0; i < nodes.size(); i++) {
			all.add("redlock.nodes[" + i + "]=" + nodes.node(i).uri());
		}
		this.runner.withPropertyValues(all.toArray(String[]::new)).run((context) -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(RedlockEndpoint.class)
				.hasSingleBean(RedlockEndpointWebExtension.class);
			try (Lease lease = context.getBean(Redlock.class)
				.acquire(LockRequest.of(RESOURCE, Duration.ofSeconds(10)).named("account"), Duration.ZERO)) {
				shownTo.forEach((viewer) -> assertShown(viewer.descriptor(context)));
				maskedFrom.forEach((viewer) -> assertMasked(viewer.descriptor(context)));
			}
		});
	}

	@Test
	void propertiesHaveMetadataForIdeCompletion() throws IOException {
		String metadata = ourMetadata();
		List<Map<String, Object>> showValues = JsonPath.read(metadata,
				"$.properties[?(@.name == 'management.endpoint.redlock.show-values')]");
		assertThat(showValues).singleElement().satisfies((property) -> {
			assertThat(property).containsEntry("type", "org.springframework.boot.actuate.endpoint.Show")
				.containsEntry("defaultValue", "never");
			assertThat((String) property.get("description")).contains("resources");
		});
		List<Map<String, Object>> roles = JsonPath.read(metadata,
				"$.properties[?(@.name == 'management.endpoint.redlock.roles')]");
		assertThat(roles).singleElement()
			.satisfies((property) -> assertThat((String) property.get("description")).contains("authenticated"));
	}

	private static void assertShown(RedlockDescriptor descriptor) {
		assertThat(descriptor.leases()).singleElement().satisfies((lease) -> {
			assertThat(lease.name()).isEqualTo("account");
			assertThat(lease.resource()).isEqualTo(RESOURCE);
		});
	}

	private static void assertMasked(RedlockDescriptor descriptor) {
		assertThat(descriptor.leases()).singleElement().satisfies((lease) -> {
			assertThat(lease.name()).isEqualTo("account");
			assertThat(lease.resource()).isEqualTo("******");
		});
		assertThat(descriptor.leases()).extracting(LeaseDescriptor::toString)
			.allSatisfy((text) -> assertThat(text).doesNotContain("alice"));
	}

	/** The metadata the configuration processor wrote for this module. */
	private static String ourMetadata() throws IOException {
		for (URL url : Collections.list(RedlockEndpointShowValuesTests.class.getClassLoader()
			.getResources("META-INF/spring-configuration-metadata.json"))) {
			try (InputStream in = url.openStream()) {
				String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
				if (json.contains("\"dev.redlock.autoconfigure.endpoint.RedlockEndpointProperties\"")) {
					return json;
				}
			}
		}
		throw new AssertionError("no configuration metadata for RedlockEndpointProperties");
	}

	/** Who reads the endpoint: a user over the web, or JMX, which has none. */
	enum Viewer {

		ANONYMOUS(SecurityContext.NONE), OPERATOR(new User("olga", Set.of("OPS"))),
		DEVELOPER(new User("dev", Set.of("DEV"))), JMX(null);

		private final @Nullable SecurityContext securityContext;

		Viewer(@Nullable SecurityContext securityContext) {
			this.securityContext = securityContext;
		}

		RedlockDescriptor descriptor(AssertableApplicationContext context) {
			return (this.securityContext != null)
					? context.getBean(RedlockEndpointWebExtension.class).redlock(this.securityContext)
					: context.getBean(RedlockEndpoint.class).redlock();
		}

	}

	/** An authenticated user with roles. */
	private record User(String name, Set<String> roles) implements SecurityContext {

		@Override
		public @Nullable Principal getPrincipal() {
			return () -> this.name;
		}

		@Override
		public boolean isUserInRole(String role) {
			return this.roles.contains(role);
		}

	}

}
