package dev.redlock.aot;

import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;

import dev.redlock.interceptor.LockExpressionRoot;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The hints every application with locked methods gets.
 */
class DistributedLockRuntimeHintsTests {

	private final RuntimeHints hints = new RuntimeHints();

	DistributedLockRuntimeHintsTests() {
		new DistributedLockRuntimeHints().registerHints(this.hints, getClass().getClassLoader());
	}

	@Test
	void theRootObjectsGettersCanBeCalledFromKeyExpressions() throws Exception {
		for (String getter : new String[] { "getMethod", "getMethodName", "getArgs", "getTarget", "getTargetClass" }) {
			assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(LockExpressionRoot.class, getter))
				.as("#root.%s", getter)
				.accepts(this.hints);
		}
	}

	@Test
	void reactorsTypesAreFoundByName() {
		assertThat(RuntimeHintsPredicates.reflection().onType(reactor.core.publisher.Flux.class)).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(reactor.core.publisher.Mono.class)).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(org.reactivestreams.Publisher.class)).accepts(this.hints);
	}

}
