package dev.redlock.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.test.context.junit.jupiter.SpringJUnitConfig;

@SpringJUnitConfig(WithRedisNodesSpringTests.EmptyConfig.class)
@WithRedisNodes(count = 2)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class WithRedisNodesSpringTests {

	@Configuration(proxyBeanMethods = false)
	static class EmptyConfig {

	}

	@Autowired
	Environment environment;

	@Autowired
	RedisNodes nodes;

	@Autowired
	ApplicationContext context;

	@Test
	void exposesTheNodeUrisAsRedlockNodesProperties() {
		assertThat(nodes.size()).isEqualTo(2);
		assertThat(environment.getProperty("redlock.nodes[0]")).isEqualTo(nodes.uris().get(0));
		assertThat(environment.getProperty("redlock.nodes[1]")).isEqualTo(nodes.uris().get(1));
		assertThat(environment.getProperty("redlock.nodes[2]")).isNull();
		// fresh nodes hold nobody's locks; lowest precedence, so a test's own value wins
		assertThat(environment.getProperty("redlock.restart-quarantine")).isEqualTo("0s");
		assertThat(((ConfigurableEnvironment) environment).getPropertySources()
			.stream()
			.reduce((first, second) -> second)
			.orElseThrow()
			.getName()).isEqualTo(WithRedisNodesContextCustomizerFactory.DEFAULTS_PROPERTY_SOURCE_NAME);
		assertThat(nodes.uris()).allMatch(uri -> uri.startsWith("redis://127.0.0.1:"));
	}

	@Test
	@Order(1)
	void registersTheNodesAsABeanForFaultInjection() {
		assertThat(context.getBean("redisNodes")).isSameAs(nodes);
		assertThat(nodes.node(0).command("PING")).isEqualTo("PONG");
		nodes.node(1).kill();
		nodes.reset();
		assertThat(nodes.node(1).command("PING")).isEqualTo("PONG");
		assertThat(environment.getProperty("redlock.nodes[1]")).isEqualTo(nodes.node(1).uri());
	}

	@Test
	@Order(2)
	void testMethodsGetTheSameNodesAsAParameter(RedisNodes parameter) {
		assertThat(parameter).isSameAs(nodes);
	}

	@Test
	@Order(3)
	void leaveNodesBroken() {
		nodes.node(0).command("SET", "leftover", "x");
		nodes.node(0).pause();
		nodes.node(1).kill();
	}

	@Test
	@Order(4)
	void eachTestStartsWithRunningUnpausedEmptyNodes() {
		for (RedisNode node : nodes.nodes()) {
			assertThat(node.isRunning()).isTrue();
			assertThat(node.isPaused()).isFalse();
			assertThat(node.command("DBSIZE")).isEqualTo("0");
		}
	}

	@Nested
	class NestedTests {

		@Autowired
		RedisNodes nestedNodes;

		@Test
		void nestedClassesSeeTheSameNodes() {
			assertThat(nestedNodes).isSameAs(nodes);
		}

	}

	@Test
	void customizersAreEqualByCountAndAbsentWithoutTheAnnotation() {
		WithRedisNodesContextCustomizerFactory factory = new WithRedisNodesContextCustomizerFactory();
		assertThat(factory.createContextCustomizer(WithRedisNodesSpringTests.class, List.of()))
			.isEqualTo(factory.createContextCustomizer(NestedTests.class, List.of()))
			.hasSameHashCodeAs(factory.createContextCustomizer(NestedTests.class, List.of()))
			.isNotEqualTo(factory.createContextCustomizer(ThreeNodes.class, List.of()))
			.isNotEqualTo(factory.createContextCustomizer(TwoTlsNodes.class, List.of()));
		assertThat(factory.createContextCustomizer(EmptyConfig.class, List.of())).isNull();
		assertThat(SharedRedisNodes.get(2, false)).isSameAs(nodes);
	}

	@WithRedisNodes
	static class ThreeNodes {

	}

	@WithRedisNodes(count = 2, tls = true)
	static class TwoTlsNodes {

	}

}
