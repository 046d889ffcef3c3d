package dev.redlock.autoconfigure;

import java.util.Optional;

import net.javacrumbs.shedlock.core.LockProvider;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;

import dev.redlock.autoconfigure.integration.RedlockIntegrationAutoConfiguration;
import dev.redlock.integration.RedlockLockRegistry;
import dev.redlock.shedlock.RedlockLockProvider;
import dev.redlock.autoconfigure.shedlock.RedlockShedLockAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Spring Integration and ShedLock adapters are there when their library is, and back
 * off for the application's own bean or without their library. No node is contacted: the
 * beans are only created.
 */
class AdapterAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RedlockAutoConfiguration.class,
				RedlockIntegrationAutoConfiguration.class, RedlockShedLockAutoConfiguration.class))
		.withPropertyValues("redlock.nodes[0]=redis://127.0.0.1:7301");

	@Test
	void bothAdaptersWhenTheirLibrariesArePresent() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(RedlockLockRegistry.class).hasSingleBean(RedlockLockProvider.class);
			assertThat(context.getBean(LockRegistry.class)).isInstanceOf(RedlockLockRegistry.class);
		});
	}

	@Test
	void theApplicationsOwnBeansWin() {
		LockProvider own = (configuration) -> Optional.empty();
		this.runner.withBean(LockRegistry.class, DefaultLockRegistry::new)
			.withBean(LockProvider.class, () -> own)
			.run((context) -> {
				assertThat(context).doesNotHaveBean(RedlockLockRegistry.class)
					.doesNotHaveBean(RedlockLockProvider.class);
				assertThat(context.getBean(LockProvider.class)).isSameAs(own);
			});
	}

	@Test
	void noAdapterWithoutItsLibrary() {
		this.runner.withClassLoader(new FilteredClassLoader(LockRegistry.class, LockProvider.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(RedlockLockRegistry.class)
				.doesNotHaveBean(RedlockLockProvider.class));
	}

}
