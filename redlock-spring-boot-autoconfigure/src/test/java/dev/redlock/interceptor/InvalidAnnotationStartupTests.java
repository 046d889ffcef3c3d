package dev.redlock.interceptor;

import org.junit.jupiter.api.Test;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.redlock.annotation.DistributedLock;
import dev.redlock.autoconfigure.RedlockAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An invalid {@code @DistributedLock} fails the application at startup, naming the method and attribute.
 */
class InvalidAnnotationStartupTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RedlockAutoConfiguration.class))
		.withPropertyValues("redlock.nodes[0]=redis://127.0.0.1:7301");

	@Test
	void unparsableDurationFailsStartup() {
		this.runner.withBean(BadTtl.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(rootMessage(context.getStartupFailure())).contains("BadTtl.work()", "'ttl'", "soon");
		});
	}

	@Test
	void unparsableKeyFailsStartup() {
		this.runner.withBean(BadKey.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(rootMessage(context.getStartupFailure())).contains("BadKey.work(String)", "'key'");
		});
	}

	@Test
	void validAnnotationIsProxied() {
		this.runner.withBean(Fine.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(AopUtils.isAopProxy(context.getBean(Fine.class))).isTrue();
		});
	}

	private static String rootMessage(Throwable failure) {
		Throwable root = failure;
		while (root.getCause() != null) {
			root = root.getCause();
		}
		return root.getMessage();
	}

	static class BadTtl {

		@DistributedLock(ttl = "soon")
		public void work() {
		}

	}

	static class BadKey {

		@DistributedLock(key = "#id +")
		public void work(String id) {
		}

	}

	static class Fine {

		@DistributedLock(key = "#id", ttl = "5s")
		public void work(String id) {
		}

	}

}
