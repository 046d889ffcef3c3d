package dev.redlock.test;

import java.util.Optional;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.support.TypeBasedParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * The JUnit Jupiter half of {@link WithRedisCluster}: resolves parameters of type
 * {@link RedisCluster} to the test class's cluster, started on first use and kept in the
 * class's store, which closes it when the class's tests are done.
 */
public final class RedisClusterExtension extends TypeBasedParameterResolver<RedisCluster> {

	private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace
		.create(RedisClusterExtension.class);

	/** Creates the extension; JUnit does this for {@link WithRedisCluster}. */
	public RedisClusterExtension() {
	}

	/**
	 * Returns the test class's cluster, starting it on first use.
	 * @param parameterContext the parameter
	 * @param extensionContext the current context
	 * @return the class's {@link RedisCluster}
	 */
	@Override
	public RedisCluster resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		ExtensionContext classContext = classContext(extensionContext);
		Class<?> testClass = classContext.getRequiredTestClass();
		WithRedisCluster settings = AnnotationSupport.findAnnotation(testClass, WithRedisCluster.class)
			.orElseThrow(() -> new IllegalStateException(testClass.getName() + " is not annotated @WithRedisCluster"));
		return classContext.getStore(NAMESPACE)
			.computeIfAbsent(testClass, (key) -> RedisCluster.start(settings.shards(), settings.replicasPerShard()),
					RedisCluster.class);
	}

	/**
	 * The context of the outermost test class: {@code @Nested} classes share its cluster.
	 */
	private static ExtensionContext classContext(ExtensionContext context) {
		ExtensionContext found = context;
		Optional<ExtensionContext> current = Optional.of(context);
		while (current.isPresent() && current.get().getTestClass().isPresent()) {
			found = current.get();
			current = found.getParent();
		}
		return found;
	}

}
