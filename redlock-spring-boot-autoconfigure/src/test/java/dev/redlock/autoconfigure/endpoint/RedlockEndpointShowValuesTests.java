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
import java.util.function.Consumer;

import com.jayway.jsonpath.JsonPath;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
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

/**
 * {@code management.endpoint.redlock.show-values} and {@code roles}: the leases'
 * resources are masked unless shown, by the rules of Boot's {@code env} endpoint, while
 * holding a real lease on three Redis nodes.
 */
@WithRedisNodes(count = 3)
class RedlockEndpointShowValuesTests {

	private static final String RESOURCE = "acct:alice@example.com";

	private static final SecurityContext ANONYMOUS = SecurityContext.NONE;

	private static final SecurityContext OPERATOR = new User("olga", Set.of("OPS"));

	private static final SecurityContext DEVELOPER = new User("dev", Set.of("DEV"));

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(RedlockAutoConfiguration.class, RedlockEndpointAutoConfiguration.class))
		.withPropertyValues("management.endpoints.web.exposure.include=redlock", "redlock.restart-quarantine=0s");

	@Test
	void neverIsTheDefaultAndMasksTheResourceEvenForAnAuthorizedUser(RedisNodes nodes) {
		for (String[] setting : List.of(new String[0], new String[] { "management.endpoint.redlock.show-values=never",
				"management.endpoint.redlock.roles=OPS" })) {
			run(nodes, setting, (view) -> {
				assertMasked(view.web(OPERATOR));
				assertMasked(view.web(ANONYMOUS));
				assertMasked(view.direct());
			});
		}
	}

	@Test
	void alwaysShowsTheResourceToAnyone(RedisNodes nodes) {
		run(nodes, new String[] { "management.endpoint.redlock.show-values=always" }, (view) -> {
			assertShown(view.web(ANONYMOUS));
			assertShown(view.web(DEVELOPER));
			assertShown(view.direct());
		});
	}

	@Test
	void whenAuthorizedShowsTheResourceToAUserInARoleOnly(RedisNodes nodes) {
		run(nodes, new String[] { "management.endpoint.redlock.show-values=when-authorized",
				"management.endpoint.redlock.roles=OPS" }, (view) -> {
					assertShown(view.web(OPERATOR));
					assertMasked(view.web(ANONYMOUS));
					assertMasked(view.web(DEVELOPER));
					// outside the web (JMX) there is no user: shown, as by Boot's env
					// endpoint
					assertShown(view.direct());
				});
	}

	@Test
	void whenAuthorizedWithoutRolesShowsTheResourceToAnyAuthenticatedUser(RedisNodes nodes) {
		run(nodes, new String[] { "management.endpoint.redlock.show-values=when-authorized" }, (view) -> {
			assertShown(view.web(DEVELOPER));
			assertMasked(view.web(ANONYMOUS));
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

	private void run(RedisNodes nodes, String[] properties, Consumer<View> assertions) {
		List<String> all = new ArrayList<>(List.of(properties));
		for (int i = 0; i < nodes.size(); i++) {
			all.add("redlock.nodes[" + i + "]=" + nodes.node(i).uri());
		}
		this.runner.withPropertyValues(all.toArray(String[]::new)).run((context) -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(RedlockEndpoint.class)
				.hasSingleBean(RedlockEndpointWebExtension.class);
			try (Lease lease = context.getBean(Redlock.class)
				.acquire(LockRequest.of(RESOURCE, Duration.ofSeconds(10)).named("account"), Duration.ZERO)) {
				assertions.accept(new View(context));
			}
		});
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

	/** The endpoint as the web and as JMX see it. */
	private record View(AssertableApplicationContext context) {

		RedlockDescriptor web(SecurityContext securityContext) {
			return this.context.getBean(RedlockEndpointWebExtension.class).redlock(securityContext);
		}

		RedlockDescriptor direct() {
			return this.context.getBean(RedlockEndpoint.class).redlock();
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
