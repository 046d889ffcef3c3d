package dev.redlock.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import dev.redlock.annotation.DistributedLock;
import dev.redlock.test.WithRedisNodes;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * With {@code redlock.observation.include-resource=false}, the observation of an
 * annotated call (and so its span) carries no {@code resource} key value; the lock name
 * and outcome are still there. On three real Redis nodes.
 */
@SpringBootTest(properties = { "redlock.default-wait-time=0s", "redlock.observation.include-resource=false" })
@WithRedisNodes(count = 3)
class ObservationLockObserverWithoutResourceTests {

	@Autowired
	private AccountService accounts;

	@Autowired
	private TestObservationRegistry registry;

	@BeforeEach
	void clean() {
		this.registry.clear();
	}

	@Test
	void lockObservationHasNoResourceKeyValue() {
		Observation current = this.accounts.close("alice@example.com");
		assertThat(current).isNotNull();
		assertThat(current.getContext().getName()).isEqualTo(ObservationLockObserver.LOCK);
		assertThat(current.getContext().getHighCardinalityKeyValue("resource")).isNull();
		assertThat(this.registry).hasNumberOfObservationsWithNameEqualTo(ObservationLockObserver.LOCK, 1)
			.hasObservationWithNameEqualTo(ObservationLockObserver.LOCK)
			.that()
			.hasLowCardinalityKeyValue("lock", "account")
			.hasLowCardinalityKeyValue("outcome", "locked")
			.doesNotHaveHighCardinalityKeyValueWithKey("resource")
			.hasBeenStopped();
		assertThat(current.getContext().getAllKeyValues())
			.allSatisfy((keyValue) -> assertThat(keyValue.getValue()).doesNotContain("alice"));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(AccountService.class)
	static class TestApplication {

		@Bean
		TestObservationRegistry observationRegistry() {
			return TestObservationRegistry.create();
		}

	}

	static class AccountService {

		private final ObservationRegistry registry;

		AccountService(ObservationRegistry registry) {
			this.registry = registry;
		}

		/** Returns the observation in scope while the method ran. */
		@DistributedLock(name = "account", key = "'acct:' + #email", ttl = "10s")
		public @Nullable Observation close(String email) {
			return this.registry.getCurrentObservation();
		}

	}

}
