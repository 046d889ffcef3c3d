package dev.redlock.aot;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.aop.support.AopUtils;
import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.aot.AbstractAotProcessor;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.core.env.MapPropertySource;
import org.springframework.javapoet.ClassName;

import java.util.Map;

import dev.redlock.annotation.DistributedLock;
import dev.redlock.autoconfigure.AutoConfigurationTesting;
import dev.redlock.autoconfigure.RedlockAutoConfiguration;
import dev.redlock.interceptor.LockExpressionRoot;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ahead-of-time processing of an application whose {@code @DistributedLock} names a
 * property that exists only at runtime (an environment variable in the container): the
 * build succeeds, and the application checks and uses the runtime value when it starts.
 */
class AheadOfTimeProcessingTests {

	@Test
	void aPlaceholderGivenOnlyAtRuntimeDoesNotFailTheBuild() {
		DefaultGenerationContext generation = new DefaultGenerationContext(
				new ClassNameGenerator(ClassName.get(getClass())), new InMemoryGeneratedFiles());
		String previous = System.setProperty(AbstractAotProcessor.AOT_PROCESSING, "true");
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
			context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("nodes", Map.of("redlock.nodes[0]", "redis://127.0.0.1:7101",
						"redlock.nodes[1]", "redis://127.0.0.1:7102", "redlock.nodes[2]", "redis://127.0.0.1:7103")));
			context.register(RedlockAutoConfiguration.class, Reports.class);
			new ApplicationContextAotGenerator().processAheadOfTime(context, generation);
		}
		finally {
			if (previous == null) {
				System.clearProperty(AbstractAotProcessor.AOT_PROCESSING);
			}
			else {
				System.setProperty(AbstractAotProcessor.AOT_PROCESSING, previous);
			}
		}
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(LockExpressionRoot.class, "getArgs"))
			.accepts(generation.getRuntimeHints());
	}

	@Test
	void theRuntimeValueIsUsedAndCheckedWhenTheApplicationStarts() {
		ApplicationContextRunner runner = AutoConfigurationTesting.runnerWithThreeNodes()
			.withConfiguration(AutoConfigurations.of(RedlockAutoConfiguration.class))
			.withBean(Reports.class);
		runner.withPropertyValues("reports.ttl=7s")
			.run((context) -> assertThat(AopUtils.isAopProxy(context.getBean(Reports.class))).isTrue());
		runner.run((context) -> assertThat(context).hasFailed()
			.getFailure()
			.rootCause()
			.hasMessageContaining("Reports.build()")
			.hasMessageContaining("ttl")
			.hasMessageContaining("reports.ttl"));
	}

	static class Reports {

		@DistributedLock(key = "'report'", ttl = "${reports.ttl}")
		Duration build() {
			return Duration.ZERO;
		}

	}

}
