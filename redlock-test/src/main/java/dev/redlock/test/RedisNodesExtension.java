package dev.redlock.test;

import java.util.Optional;

import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * The JUnit Jupiter half of {@link WithRedisNodes}: resolves parameters of type
 * {@link RedisNodes} to the nodes shared by every test with the same settings, and
 * {@link RedisNodes#reset() resets} them before each test, ahead of the test's own
 * {@code @BeforeEach} methods. The settings come from the nearest
 * {@code @WithRedisNodes}: on the test class, a superclass, or an enclosing class of a
 * {@code @Nested} test.
 *
 * <p>
 * It can also be registered directly with {@code @ExtendWith(RedisNodesExtension.class)};
 * then it uses 3 nodes without TLS. That registers no Spring properties: use
 * {@link WithRedisNodes} for Spring tests.
 */
public final class RedisNodesExtension implements ParameterResolver, BeforeEachCallback {

	/** Creates the extension; JUnit does this for {@link WithRedisNodes}. */
	public RedisNodesExtension() {
	}

	/**
	 * Supports parameters of type {@link RedisNodes}.
	 * @param parameterContext the parameter
	 * @param extensionContext the current context
	 * @return whether the parameter's type is {@link RedisNodes}
	 */
	@Override
	public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		return parameterContext.getParameter().getType() == RedisNodes.class;
	}

	/**
	 * Returns the test's nodes, starting them on first use.
	 * @param parameterContext the parameter
	 * @param extensionContext the current context
	 * @return the {@link RedisNodes} shared by every test with the same settings
	 */
	@Override
	public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		return nodes(extensionContext);
	}

	/**
	 * Resets every node (running, unpaused, empty) before each test: see
	 * {@link RedisNodes#reset()}.
	 * @param context the test's context
	 */
	@Override
	public void beforeEach(ExtensionContext context) {
		nodes(context).reset();
	}

	private static RedisNodes nodes(ExtensionContext context) {
		return settings(context).map(SharedRedisNodes::get).orElseGet(() -> SharedRedisNodes.get(3, false));
	}

	/**
	 * The nearest {@link WithRedisNodes}: walks from the innermost class context out to
	 * the enclosing ones; each class is searched with its superclasses and
	 * meta-annotations.
	 */
	private static Optional<WithRedisNodes> settings(ExtensionContext context) {
		for (Optional<ExtensionContext> current = Optional.of(context); current
			.isPresent(); current = current.get().getParent()) {
			Optional<WithRedisNodes> found = current.get()
				.getTestClass()
				.flatMap((type) -> AnnotationSupport.findAnnotation(type, WithRedisNodes.class));
			if (found.isPresent()) {
				return found;
			}
		}
		return Optional.empty();
	}

}
