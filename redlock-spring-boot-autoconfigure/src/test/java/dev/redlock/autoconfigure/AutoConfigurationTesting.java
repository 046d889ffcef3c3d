package dev.redlock.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * What the tests of the auto-configurations share: a context runner with three
 * (unreachable) nodes configured.
 */
public final class AutoConfigurationTesting {

	/** Three nodes on ports nothing listens on: enough to build a {@code Redlock}. */
	public static final String[] THREE_NODES = { "redlock.nodes[0]=redis://127.0.0.1:7101",
			"redlock.nodes[1]=redis://127.0.0.1:7102", "redlock.nodes[2]=redis://127.0.0.1:7103" };

	private AutoConfigurationTesting() {
	}

	/**
	 * A runner of {@link RedlockAutoConfiguration} and the given auto-configurations,
	 * with {@link #THREE_NODES}.
	 * @param autoConfigurations the auto-configurations under test
	 * @return the runner
	 */
	public static ApplicationContextRunner runnerWithThreeNodes(Class<?>... autoConfigurations) {
		return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RedlockAutoConfiguration.class))
			.withConfiguration(AutoConfigurations.of(autoConfigurations))
			.withPropertyValues(THREE_NODES);
	}

}
