package dev.redlock.docs;

import java.time.Duration;

import dev.redlock.core.Lease;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockSettings;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The example of {@code docs/test-kit.md}. Its classes are inner classes, so neither
 * Surefire nor JUnit runs them; it lives in this module, whose Surefire keeps the default
 * exclusion of inner classes, so that JUnit is not even offered them (the sample app
 * overrides the exclusions, and JUnit would warn about an inner class with tests).
 * {@code DocumentationSnippetsTests} (in the sample app) checks that the Markdown shows
 * exactly the tagged region. Nothing here is run.
 */
class KitSnippets {

	// tag::test-kit[]
	@WithRedisNodes(count = 5) // plain JUnit Jupiter
	class FailoverTests {

		@Test
		void minorityDown(RedisNodes nodes) {
			nodes.node(1).kill(); // SIGKILL; restart() brings it back, empty
			nodes.node(3).pause(); // SIGSTOP; resume() sends SIGCONT
			// nodes started a moment ago would sit out the 60 s restart quarantine
			// (every acquisition fails with NO_QUORUM meanwhile): turn it off for them,
			// as @WithRedisNodes does in Spring tests
			RedlockSettings settings = RedlockSettings.defaults().withRestartQuarantine(Duration.ZERO);
			try (Redlock redlock = Redlock.builder().nodes(nodes.uris()).settings(settings).build();
					Lease lease = redlock.acquire("order:1", Duration.ofSeconds(5), Duration.ZERO)) {
				assertThat(lease.isValid()).isTrue(); // 3 of 5 nodes are a quorum
			}
		}

	}

	// Spring too: @WithRedisNodes also sets redlock.nodes[i] and the RedisNodes bean
	@SpringBootTest
	@WithRedisNodes(count = 3)
	class CheckoutTests {

		@Autowired
		RedisNodes nodes; // or a RedisNodes parameter, as above

	}
	// end::test-kit[]

}
