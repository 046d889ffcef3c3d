package dev.redlock.aot;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

import dev.redlock.interceptor.LockExpressionRoot;

/**
 * The hints every application with {@code @DistributedLock} methods needs, whatever its
 * beans: the getters of the key expressions' {@code #root} object, and Reactor's types,
 * which the interceptor looks for by name to lock {@code Mono} and {@code Flux} results.
 * The hints of each locked bean come from
 * {@link DistributedLockBeanRegistrationAotProcessor}.
 */
public class DistributedLockRuntimeHints implements RuntimeHintsRegistrar {

	private static final String[] REACTIVE_TYPES = { "reactor.core.publisher.Flux", "reactor.core.publisher.Mono",
			"org.reactivestreams.Publisher" };

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.reflection().registerType(LockExpressionRoot.class, MemberCategory.INVOKE_PUBLIC_METHODS);
		for (String reactiveType : REACTIVE_TYPES) {
			hints.reflection().registerTypeIfPresent(classLoader, reactiveType, (type) -> {
			});
		}
	}

}
