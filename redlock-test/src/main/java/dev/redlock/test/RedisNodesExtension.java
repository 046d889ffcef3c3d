package dev.redlock.test;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * JUnit Jupiter extension behind {@link WithRedisNodes}: one {@link RedisNodes} per
 * (outermost) test class, kept in that class's {@link ExtensionContext.Store} so JUnit
 * closes it when the class is done, resolved for parameters of type {@link RedisNodes},
 * and {@link RedisNodes#reset() reset} before each test.
 *
 * <p>
 * It can also be registered directly with {@code @ExtendWith(RedisNodesExtension.class)};
 * then 3 nodes are started.
 */
public final class RedisNodesExtension implements ParameterResolver, BeforeEachCallback {

	private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace
		.create(RedisNodesExtension.class);

	private static final String KEY = "redisNodes";

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
	 * Returns the test class's nodes, starting them on first use.
	 * @param parameterContext the parameter
	 * @param extensionContext the current context
	 * @return the shared {@link RedisNodes} of the outermost annotated test class
	 */
	@Override
	public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		return nodes(extensionContext);
	}

	/**
	 * Resets every node (running, unpaused, empty) before each test.
	 * @param context the test's context
	 */
	@Override
	public void beforeEach(ExtensionContext context) {
		nodes(context).reset();
	}

	private static RedisNodes nodes(ExtensionContext context) {
		ExtensionContext owner = owner(context);
		Optional<WithRedisNodes> settings = owner.getTestClass()
			.flatMap(type -> AnnotationSupport.findAnnotation(type, WithRedisNodes.class));
		int count = settings.map(WithRedisNodes::count).orElse(3);
		boolean tls = settings.map(WithRedisNodes::tls).orElse(false);
		return owner.getStore(NAMESPACE)
			.computeIfAbsent(KEY, key -> tls ? RedisNodes.startTls(count) : RedisNodes.start(count), RedisNodes.class);
	}

	/**
	 * The outermost class-level context whose class carries {@link WithRedisNodes}, else
	 * the outermost class one.
	 */
	private static ExtensionContext owner(ExtensionContext context) {
		List<ExtensionContext> classContexts = new ArrayList<>();
		for (Optional<ExtensionContext> current = Optional.of(context); current
			.isPresent(); current = current.get().getParent()) {
			ExtensionContext candidate = current.get();
			if (candidate.getTestClass().isPresent() && candidate.getTestMethod().isEmpty()) {
				classContexts.add(candidate);
			}
		}
		if (classContexts.isEmpty()) {
			throw new IllegalStateException("RedisNodesExtension needs a test class context, got " + context);
		}
		for (int i = classContexts.size() - 1; i >= 0; i--) {
			ExtensionContext candidate = classContexts.get(i);
			if (candidate.getTestClass()
				.flatMap(type -> AnnotationSupport.findAnnotation(type, WithRedisNodes.class))
				.isPresent()) {
				return candidate;
			}
		}
		return classContexts.get(classContexts.size() - 1);
	}

}
