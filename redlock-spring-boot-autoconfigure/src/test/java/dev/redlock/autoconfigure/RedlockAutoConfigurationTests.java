package dev.redlock.autoconfigure;

import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URL;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.redlock.annotation.DistributedLock;
import dev.redlock.autoconfigure.metrics.RedlockMetricsAutoConfiguration;
import dev.redlock.autoconfigure.observation.RedlockObservationAutoConfiguration;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockListener;
import dev.redlock.core.RedlockSettings;
import dev.redlock.interceptor.DistributedLockAdvisor;
import dev.redlock.interceptor.LockObserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class RedlockAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RedlockAutoConfiguration.class));

	@Test
	void bindsPropertiesIntoTheRedlockBean() {
		this.runner.withPropertyValues(AutoConfigurationTesting.THREE_NODES)
			.withPropertyValues("redlock.key-prefix=shop:", "redlock.default-ttl=12s", "redlock.default-wait-time=0",
					"redlock.retry-delay=50ms", "redlock.node-timeout=20ms", "redlock.clock-drift-factor=0.02",
					"redlock.max-extensions=7", "redlock.pool.max-total=9", "redlock.pool.max-idle=3",
					"redlock.client-name=orders")
			.run((context) -> {
				assertThat(context).hasSingleBean(Redlock.class).hasSingleBean(DistributedLockAdvisor.class);
				Redlock redlock = context.getBean(Redlock.class);
				assertThat(redlock.nodeAddresses()).containsExactly("redis://127.0.0.1:7101", "redis://127.0.0.1:7102",
						"redis://127.0.0.1:7103");
				assertThat(redlock.quorum()).isEqualTo(2);
				assertThat(redlock.settings().keyPrefix()).isEqualTo("shop:");
				assertThat(redlock.settings().defaultTtl()).isEqualTo(Duration.ofSeconds(12));
				assertThat(redlock.settings().defaultWaitTime()).isZero();
				assertThat(redlock.settings().retryDelay()).isEqualTo(Duration.ofMillis(50));
				assertThat(redlock.settings().nodeTimeout()).isEqualTo(Duration.ofMillis(20));
				assertThat(redlock.settings().clockDriftFactor()).isEqualTo(0.02);
				assertThat(redlock.settings().maxExtensions()).isEqualTo(7);
				assertThat(redlock.settings().poolMaxTotal()).isEqualTo(9);
				assertThat(redlock.settings().poolMaxIdle()).isEqualTo(3);
				assertThat(redlock.settings().clientName()).isEqualTo("orders");
			});
	}

	@Test
	void defaultsMatchTheCoreDefaults() {
		this.runner.withPropertyValues(AutoConfigurationTesting.THREE_NODES).run((context) -> {
			assertThat(context.getBean(Redlock.class).settings()).isEqualTo(RedlockSettings.defaults());
			assertThat(context.getBean(DistributedLockAdvisor.class).getOrder())
				.isEqualTo(RedlockProperties.DEFAULT_INTERCEPTOR_ORDER);
		});
	}

	@Test
	void interceptorOrderIsConfigurable() {
		this.runner.withPropertyValues(AutoConfigurationTesting.THREE_NODES)
			.withPropertyValues("redlock.interceptor-order=42")
			.run((context) -> assertThat(context.getBean(DistributedLockAdvisor.class).getOrder()).isEqualTo(42));
	}

	@Test
	void backsOffWhenTheApplicationDefinesARedlock() {
		this.runner.withBean("myRedlock", Redlock.class, () -> Redlock.builder().node("redis://127.0.0.1:7201").build())
			.run((context) -> {
				assertThat(context).hasSingleBean(Redlock.class).hasBean("myRedlock");
				assertThat(context).hasSingleBean(DistributedLockAdvisor.class);
			});
	}

	@Test
	void disabledSwitchTurnsEverythingOff() {
		this.runner.withPropertyValues(AutoConfigurationTesting.THREE_NODES)
			.withPropertyValues("redlock.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(Redlock.class)
				.doesNotHaveBean(DistributedLockAdvisor.class)
				.doesNotHaveBean(RedlockProperties.class));
	}

	@Test
	void disabledSwitchSkipsValidation() {
		this.runner.withPropertyValues("redlock.enabled=false").run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void startsAndInterceptsWithoutMicrometerOrActuatorOnTheClasspath() {
		this.runner
			.withConfiguration(AutoConfigurations.of(RedlockMetricsAutoConfiguration.class,
					RedlockObservationAutoConfiguration.class))
			.withPropertyValues(AutoConfigurationTesting.THREE_NODES)
			// nothing listens on the nodes' ports: an intercepted call fails fast without
			// a quorum
			.withPropertyValues("redlock.default-wait-time=0s")
			.withBean(Inventory.class)
			.withClassLoader(new FilteredClassLoader("io.micrometer", "org.springframework.boot.actuate",
					"org.springframework.boot.health"))
			.run((context) -> {
				assertThat(context).hasNotFailed()
					.hasSingleBean(Redlock.class)
					.doesNotHaveBean(RedlockListener.class)
					.doesNotHaveBean(LockObserver.class);
				Inventory inventory = context.getBean(Inventory.class);
				assertThat(AopUtils.isAopProxy(inventory)).isTrue();
				assertThatExceptionOfType(LockNotAcquiredException.class).isThrownBy(() -> inventory.count("a"))
					.satisfies((ex) -> assertThat(ex.reason()).isEqualTo(LockNotAcquiredException.Reason.NO_QUORUM));
				assertThat(inventory.counted()).isZero();
			});
	}

	@Test
	void noNodesFailsNamingTheProperty() {
		assertFailure(this.runner, "redlock.nodes", "no Redis nodes configured");
	}

	@Test
	void aClusterUriWithAQueryFailsNamingTheIndex() {
		assertFailure(
				this.runner.withPropertyValues("redlock.nodes[0]=redis://127.0.0.1:7101",
						"redlock.nodes[1]=redis-cluster://127.0.0.1:7000,127.0.0.1:7001?timeout=1",
						"redlock.nodes[2]=redis://127.0.0.1:7103"),
				"redlock.nodes[1]", "the only query parameter supported is shards");
	}

	@Test
	void malformedUriFailsNamingTheIndexWithoutThePassword() {
		assertFailure(this.runner.withPropertyValues("redlock.nodes[0]=redis://127.0.0.1:7101",
				"redlock.nodes[1]=redis://:hunter2@127.0.0.1:notaport", "redlock.nodes[2]=redis://127.0.0.1:7103"),
				"redlock.nodes[1]", "Invalid Redis node URI");
	}

	@Test
	void wrongSchemeFails() {
		assertFailure(this.runner.withPropertyValues("redlock.nodes[0]=http://127.0.0.1:7101"), "redlock.nodes[0]",
				"redis://, rediss://, redis-sentinel://, rediss-sentinel://, redis-cluster:// or rediss-cluster://");
	}

	@Test
	void sameNodeListedTwiceFails() {
		assertFailure(this.runner.withPropertyValues("redlock.nodes[0]=redis://:hunter2@127.0.0.1:7101",
				"redlock.nodes[1]=redis://127.0.0.1:7102", "redlock.nodes[2]=redis://:hunter2@localhost:7101/3"),
				"redlock.nodes[2]", "same server as nodes[0]");
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', textBlock = """
			redlock.default-ttl=0s           | redlock.default-ttl        | must be positive
			redlock.default-ttl=-5s          | redlock.default-ttl        | must be positive
			redlock.default-ttl=2m           | redlock.default-ttl        | raise restartQuarantine
			redlock.default-ttl=2ms          | redlock.default-ttl        | clock drift allowance
			redlock.clock-drift-factor=1     | redlock.clock-drift-factor | below 1
			redlock.clock-drift-factor=-0.5  | redlock.clock-drift-factor | at least 0
			redlock.pool.max-total=0         | redlock.pool.max-total     | at least 1
			""")
	void invalidSettingFailsNamingTheProperty(String setting, String property, String reason) {
		assertFailure(this.runner.withPropertyValues(AutoConfigurationTesting.THREE_NODES).withPropertyValues(setting),
				property, reason);
	}

	@Test
	void failureAnalyzerIsRegistered() throws Exception {
		List<String> registered = new ArrayList<>();
		for (URL url : Collections.list(getClass().getClassLoader().getResources("META-INF/spring.factories"))) {
			Properties factories = new Properties();
			try (InputStream in = url.openStream()) {
				factories.load(in);
			}
			registered.add(factories.getProperty("org.springframework.boot.diagnostics.FailureAnalyzer", ""));
		}
		assertThat(registered).anyMatch((names) -> names.contains(RedlockConfigurationFailureAnalyzer.class.getName()));
	}

	/**
	 * Public: the proxy class is defined by the filtered class loader, in another runtime
	 * package.
	 */
	public static class Inventory {

		private int counted;

		@DistributedLock(key = "#sku")
		public void count(String sku) {
			this.counted++;
		}

		public int counted() {
			return this.counted;
		}

	}

	private static void assertFailure(ApplicationContextRunner runner, String property, String reason) {
		runner.run((context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			InvalidRedlockPropertyException cause = findCause(failure);
			assertThat(cause).as("InvalidRedlockPropertyException in %s", failure).isNotNull();
			assertThat(cause.property()).isEqualTo(property);
			assertThat(cause.getMessage()).contains(property, reason).doesNotContain("hunter2");
			FailureAnalysis analysis = new RedlockConfigurationFailureAnalyzer().analyze(failure);
			assertThat(analysis).isNotNull();
			assertThat(analysis.getDescription()).contains(property, reason).doesNotContain("hunter2");
			assertThat(analysis.getAction()).isNotBlank();
			assertThat(stackTraceText(failure)).doesNotContain("hunter2");
		});
	}

	private static InvalidRedlockPropertyException findCause(Throwable failure) {
		for (Throwable t = failure; t != null; t = t.getCause()) {
			if (t instanceof InvalidRedlockPropertyException invalid) {
				return invalid;
			}
		}
		return null;
	}

	private static String stackTraceText(Throwable failure) {
		StringWriter text = new StringWriter();
		failure.printStackTrace(new PrintWriter(text));
		return text.toString();
	}

}
