package dev.redlock.sample;

import org.springframework.boot.SpringApplication;

/**
 * The shop for development, with no setup: {@link ShopApplication} plus
 * {@link LocalRedisNodesConfiguration}, which starts local Redis nodes when
 * {@code redlock.nodes} is not configured. Run it from the repository root with
 * {@code mvn -q -pl sample-app -am spring-boot:test-run}.
 */
public final class TestShopApplication {

	private TestShopApplication() {
	}

	/**
	 * Starts the shop and its local Redis nodes.
	 * @param args the command line, e.g. {@code --server.port=8081}
	 */
	public static void main(String[] args) {
		SpringApplication.from(ShopApplication::main).with(LocalRedisNodesConfiguration.class).run(args);
	}

}
