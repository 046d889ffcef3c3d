package dev.redlock.test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import org.jspecify.annotations.Nullable;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;

/**
 * Spring TestContext hook behind {@link RedlockTestNodes}, registered in
 * {@code META-INF/spring.factories}. Users do not call it directly.
 */
public final class RedlockTestNodesContextCustomizerFactory implements ContextCustomizerFactory {

	/** Name of the property source holding {@code redlock.nodes[i]}. */
	public static final String PROPERTY_SOURCE_NAME = "redlockTestNodes";

	/**
	 * Name of the property source holding defaults for the kit's nodes, at the lowest
	 * precedence.
	 */
	public static final String DEFAULTS_PROPERTY_SOURCE_NAME = "redlockTestNodesDefaults";

	/** Name of the {@link RedisNodes} bean. */
	public static final String BEAN_NAME = "redisNodes";

	private static final ConcurrentMap<Integer, RedisNodes> SHARED = new ConcurrentHashMap<>();

	/** Creates the factory; Spring does this through {@code spring.factories}. */
	public RedlockTestNodesContextCustomizerFactory() {
	}

	/**
	 * Returns a customizer when the test class (or a superclass or enclosing class)
	 * carries {@link RedlockTestNodes}.
	 * @param testClass the test class
	 * @param configAttributes the test's context configuration
	 * @return a customizer equal for equal counts, or null when the annotation is absent
	 */
	@Override
	public @Nullable ContextCustomizer createContextCustomizer(Class<?> testClass,
			List<ContextConfigurationAttributes> configAttributes) {
		RedlockTestNodes annotation = TestContextAnnotationUtils.findMergedAnnotation(testClass,
				RedlockTestNodes.class);
		if (annotation == null) {
			return null;
		}
		if (annotation.count() < 1) {
			throw new IllegalArgumentException("@RedlockTestNodes(count) must be at least 1 on " + testClass);
		}
		return new Customizer(annotation.count());
	}

	/**
	 * The JVM-wide nodes for a count, started on first use and stopped by the shutdown
	 * hook.
	 * @param count the number of nodes
	 * @return the shared running nodes
	 */
	static RedisNodes shared(int count) {
		return SHARED.computeIfAbsent(count, RedisNodes::start);
	}

	/**
	 * Adds the properties and the bean; equal by count so that Spring's context cache
	 * works.
	 */
	private record Customizer(int count) implements ContextCustomizer {

		@Override
		public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration mergedConfig) {
			RedisNodes nodes = shared(count);
			Map<String, Object> properties = new LinkedHashMap<>();
			List<String> uris = nodes.uris();
			for (int i = 0; i < uris.size(); i++) {
				properties.put("redlock.nodes[" + i + "]", uris.get(i));
			}
			context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource(PROPERTY_SOURCE_NAME, properties));
			// the kit's nodes were started moments ago and hold nobody's locks: a restart
			// quarantine would only keep
			// them from counting; any value the test sets wins over this one
			context.getEnvironment()
				.getPropertySources()
				.addLast(new MapPropertySource(DEFAULTS_PROPERTY_SOURCE_NAME,
						Map.of("redlock.restart-quarantine", "0s")));
			context.getBeanFactory().registerSingleton(BEAN_NAME, nodes);
		}
	}

}
