package dev.redlock.test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;

/**
 * The Spring TestContext half of {@link WithRedisNodes}, registered in
 * {@code META-INF/spring.factories}: sets {@code redlock.nodes[i]} and the quarantine
 * default, and registers the {@code redisNodes} bean. Users do not call it directly.
 */
public final class WithRedisNodesContextCustomizerFactory implements ContextCustomizerFactory {

	/** Name of the property source holding {@code redlock.nodes[i]}. */
	public static final String PROPERTY_SOURCE_NAME = "redlockTestNodes";

	/**
	 * Name of the property source holding defaults for the kit's nodes, at the lowest
	 * precedence.
	 */
	public static final String DEFAULTS_PROPERTY_SOURCE_NAME = "redlockTestNodesDefaults";

	/** Name of the {@link RedisNodes} bean. */
	public static final String BEAN_NAME = "redisNodes";

	/** Creates the factory; Spring does this through {@code spring.factories}. */
	public WithRedisNodesContextCustomizerFactory() {
	}

	/**
	 * Returns a customizer when the test class (or a superclass or enclosing class)
	 * carries {@link WithRedisNodes}.
	 * @param testClass the test class
	 * @param configAttributes the test's context configuration
	 * @return a customizer equal for equal settings, or null when the annotation is
	 * absent
	 */
	@Override
	public @Nullable ContextCustomizer createContextCustomizer(Class<?> testClass,
			List<ContextConfigurationAttributes> configAttributes) {
		WithRedisNodes annotation = TestContextAnnotationUtils.findMergedAnnotation(testClass, WithRedisNodes.class);
		if (annotation == null) {
			return null;
		}
		if (annotation.count() < 1) {
			throw new IllegalArgumentException("@WithRedisNodes(count) must be at least 1 on " + testClass);
		}
		return new Customizer(annotation.count(), annotation.tls(), annotation.inProcess());
	}

	/**
	 * Adds the properties and the bean; equal by settings so that Spring's context cache
	 * works.
	 */
	private record Customizer(int count, boolean tls, boolean inProcess) implements ContextCustomizer {

		@Override
		public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration mergedConfig) {
			RedisNodes nodes = SharedRedisNodes.get(this.count, this.tls, this.inProcess);
			Map<String, Object> properties = new LinkedHashMap<>();
			for (int i = 0; i < nodes.size(); i++) {
				RedisNode node = nodes.node(i);
				properties.put("redlock.nodes[" + i + "]", this.tls ? node.tlsUri() : node.uri());
			}
			context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource(PROPERTY_SOURCE_NAME, properties));
			// the kit's nodes hold no other application's locks: a restart quarantine
			// would only keep them from counting after a test restarts one; any value
			// the test sets wins over this one
			context.getEnvironment()
				.getPropertySources()
				.addLast(new MapPropertySource(DEFAULTS_PROPERTY_SOURCE_NAME,
						Map.of("redlock.restart-quarantine", "0s")));
			context.getBeanFactory().registerSingleton(BEAN_NAME, nodes);
		}
	}

}
