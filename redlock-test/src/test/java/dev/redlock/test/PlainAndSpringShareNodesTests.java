package dev.redlock.test;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * One rule for plain JUnit and Spring tests: the same settings give the same nodes for
 * the whole run, and the nearest annotation decides the settings.
 */
@WithRedisNodes(count = 2)
class PlainAndSpringShareNodesTests {

	@Test
	void aPlainTestGetsTheNodesASpringTestWithTheSameSettingsGets(RedisNodes nodes) {
		assertThat(nodes).isSameAs(SharedRedisNodes.get(2, false));
		assertThat(nodes.size()).isEqualTo(2);
	}

	@Nested
	@WithRedisNodes(count = 1)
	class NestedWithOtherSettings {

		@Test
		void theNearestAnnotationWins(RedisNodes nodes) {
			assertThat(nodes.size()).isEqualTo(1);
			assertThat(nodes).isSameAs(SharedRedisNodes.get(1, false));
		}

	}

}
