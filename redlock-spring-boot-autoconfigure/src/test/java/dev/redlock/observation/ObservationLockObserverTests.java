package dev.redlock.observation;

import java.time.Duration;
import java.util.Optional;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.TestPropertySource;

import dev.redlock.annotation.DistributedLock;
import dev.redlock.annotation.OnLocked;
import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.Redlock;
import dev.redlock.test.WithRedisNodes;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The observations of annotated calls, on three real Redis nodes.
 */
@SpringBootTest(classes = ObservationLockObserverTests.TestApplication.class,
		properties = "redlock.default-wait-time=0s")
@WithRedisNodes(count = 3)
class ObservationLockObserverTests {

	@Autowired
	private DocumentService documents;

	@Autowired
	private TestObservationRegistry registry;

	@Autowired
	private Redlock redlock;

	@BeforeEach
	void clean() {
		this.registry.clear();
	}

	@Test
	void callIsALockObservationWithAcquireAndReleaseChildren() {
		this.documents.edit("42");
		assertThat(this.registry).hasNumberOfObservationsWithNameEqualTo(ObservationLockObserver.LOCK, 1)
			.hasObservationWithNameEqualTo(ObservationLockObserver.LOCK)
			.that()
			.hasLowCardinalityKeyValue("lock", "document")
			.hasHighCardinalityKeyValue("resource", "doc:42")
			.doesNotHaveParentObservation()
			.doesNotHaveError()
			.hasBeenStarted()
			.hasBeenStopped();
		assertOneStoppedChildOfTheLock(ObservationLockObserver.ACQUIRE, "acquired");
		assertOneStoppedChildOfTheLock(ObservationLockObserver.RELEASE, "released");
		assertThat(this.registry.getCurrentObservation()).isNull();
	}

	@Test
	void lockObservationIsInScopeWhileTheMethodRuns() {
		Observation current = this.documents.edit("7");
		assertThat(current).isNotNull();
		assertThat(current.getContext().getName()).isEqualTo(ObservationLockObserver.LOCK);
		assertThat(current.getContext().getHighCardinalityKeyValue("resource").getValue()).isEqualTo("doc:7");
	}

	@Test
	void methodsOwnObservationsAreChildrenOfTheLock() {
		this.documents.edit("8");
		assertThat(this.registry).hasObservationWithNameEqualTo("document.edit")
			.that()
			.hasParentObservationContextMatching((parent) -> ObservationLockObserver.LOCK.equals(parent.getName()))
			.hasBeenStopped();
	}

	@Test
	void contendedCallRecordsTheOutcomeAndTheError() {
		try (Lease held = this.redlock.acquire("doc:9", Duration.ofSeconds(10), Duration.ZERO)) {
			assertThatExceptionOfType(LockNotAcquiredException.class).isThrownBy(() -> this.documents.edit("9"));
		}
		assertThat(this.registry).hasObservationWithNameEqualTo(ObservationLockObserver.ACQUIRE)
			.that()
			.hasLowCardinalityKeyValue("outcome", "contended")
			.hasError()
			.hasBeenStopped();
		assertThat(this.registry).hasObservationWithNameEqualTo(ObservationLockObserver.LOCK)
			.that()
			.hasError()
			.hasBeenStopped();
		assertThat(this.registry).hasNumberOfObservationsWithNameEqualTo(ObservationLockObserver.RELEASE, 0)
			.hasNumberOfObservationsWithNameEqualTo("document.edit", 0);
		assertThat(this.registry.getCurrentObservation()).isNull();
	}

	@Test
	void everyCallsOutcomeIsALowCardinalityKeyOfTheLockObservation() {
		this.documents.edit("11");
		assertOutcome("locked");
		try (Lease held = this.redlock.acquire("doc:11", Duration.ofSeconds(10), Duration.ZERO)) {
			assertThatExceptionOfType(LockNotAcquiredException.class).isThrownBy(() -> this.documents.edit("11"));
			assertOutcome("not_acquired");
			assertThat(this.documents.editIfFree("11")).isEmpty();
			assertOutcome("skipped");
			assertThat(this.documents.editOrQueue("11")).isEqualTo("queued 11");
			assertOutcome("fallback");
		}
	}

	private void assertOutcome(String outcome) {
		assertThat(this.registry).hasObservationWithNameEqualTo(ObservationLockObserver.LOCK)
			.that()
			.hasLowCardinalityKeyValue("outcome", outcome)
			.hasBeenStopped();
		this.registry.clear();
	}

	@Test
	void methodFailureIsTheLockObservationsErrorAndTheLeaseIsStillReleased() {
		assertThatIllegalStateException().isThrownBy(() -> this.documents.fail("10")).withMessage("rejected");
		assertThat(this.registry).hasObservationWithNameEqualTo(ObservationLockObserver.LOCK)
			.that()
			.assertThatError()
			.isInstanceOf(IllegalStateException.class)
			.hasMessage("rejected");
		assertThat(this.registry).hasObservationWithNameEqualTo(ObservationLockObserver.RELEASE)
			.that()
			.hasLowCardinalityKeyValue("outcome", "released")
			.doesNotHaveError();
		assertThat(this.registry.getCurrentObservation()).isNull();
	}

	/**
	 * Asserts one stopped observation of the name, a child of the lock's, with the lock's
	 * name and the outcome.
	 */
	private void assertOneStoppedChildOfTheLock(String name, String outcome) {
		assertThat(this.registry).hasNumberOfObservationsWithNameEqualTo(name, 1)
			.hasObservationWithNameEqualTo(name)
			.that()
			.hasLowCardinalityKeyValue("lock", "document")
			.hasLowCardinalityKeyValue("outcome", outcome)
			.hasParentObservationContextMatching((parent) -> ObservationLockObserver.LOCK.equals(parent.getName()))
			.hasBeenStopped();
	}

	/**
	 * With {@code redlock.observation.include-resource=false}, the observation of an
	 * annotated call (and so its span) carries no {@code resource} key value; the lock
	 * name and outcome are still there.
	 */
	@Nested
	@TestPropertySource(properties = "redlock.observation.include-resource=false")
	class WithoutTheResource {

		@Autowired
		private DocumentService documents;

		@Autowired
		private TestObservationRegistry registry;

		@BeforeEach
		void clean() {
			this.registry.clear();
		}

		@Test
		void lockObservationHasNoResourceKeyValue() {
			Observation current = this.documents.edit("alice@example.com");
			assertThat(current).isNotNull();
			assertThat(current.getContext().getName()).isEqualTo(ObservationLockObserver.LOCK);
			assertThat(current.getContext().getHighCardinalityKeyValue("resource")).isNull();
			assertThat(this.registry).hasNumberOfObservationsWithNameEqualTo(ObservationLockObserver.LOCK, 1)
				.hasObservationWithNameEqualTo(ObservationLockObserver.LOCK)
				.that()
				.hasLowCardinalityKeyValue("lock", "document")
				.hasLowCardinalityKeyValue("outcome", "locked")
				.doesNotHaveHighCardinalityKeyValueWithKey("resource")
				.hasBeenStopped();
			assertThat(current.getContext().getAllKeyValues())
				.allSatisfy((keyValue) -> assertThat(keyValue.getValue()).doesNotContain("alice"));
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(DocumentService.class)
	static class TestApplication {

		@Bean
		TestObservationRegistry observationRegistry() {
			return TestObservationRegistry.create();
		}

	}

	static class DocumentService {

		private final ObservationRegistry registry;

		DocumentService(ObservationRegistry registry) {
			this.registry = registry;
		}

		/**
		 * Runs an observation of its own and returns the observation in scope while it
		 * ran.
		 */
		@DistributedLock(name = "document", key = "'doc:' + #id", ttl = "10s")
		public @Nullable Observation edit(String id) {
			Observation current = this.registry.getCurrentObservation();
			Observation.createNotStarted("document.edit", this.registry).observe(() -> {
			});
			return current;
		}

		@DistributedLock(name = "document", key = "'doc:' + #id", ttl = "10s", onLocked = OnLocked.SKIP)
		public Optional<String> editIfFree(String id) {
			return Optional.of("edited " + id);
		}

		@DistributedLock(name = "document", key = "'doc:' + #id", ttl = "10s", onLocked = OnLocked.FALLBACK,
				fallback = "queue")
		public String editOrQueue(String id) {
			return "edited " + id;
		}

		String queue(String id) {
			return "queued " + id;
		}

		@DistributedLock(name = "document", key = "'doc:' + #id", ttl = "10s")
		public void fail(String id) {
			throw new IllegalStateException("rejected");
		}

	}

}
