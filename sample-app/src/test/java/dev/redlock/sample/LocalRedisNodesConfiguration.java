package dev.redlock.sample;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * Development-time services for the shop, as Spring Boot does them: local Redis nodes
 * when {@code redlock.nodes} is not configured ({@link LocalRedisNodes}), and the
 * dashboard's buttons that kill, pause, resume or restart one of them
 * ({@link DemoNodesController}). Used by {@link TestShopApplication} and imported by the
 * sample's tests; never part of the shop's jar.
 */
@TestConfiguration(proxyBeanMethods = false)
@Import(DemoNodesController.class)
public class LocalRedisNodesConfiguration {

	/**
	 * Starts the local nodes, if wanted, before any bean reads {@code redlock.nodes}.
	 * @return the post-processor that starts and stops them
	 */
	@Bean
	static LocalRedisNodes localRedisNodesStarter() {
		return new LocalRedisNodes();
	}

}
