package dev.redlock.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;

/**
 * A small shop whose purchases read the stock, think, and write it back: a race that only
 * a lock makes safe. {@code POST /api/skus/{sku}/buy} runs under
 * {@code @DistributedLock}; {@code POST /api/skus/{sku}/buy-unlocked} is the same code
 * without it, and oversells under concurrent load.
 *
 * <p>
 * With no {@code redlock.nodes} configured,
 * {@link LocalRedisNodesEnvironmentPostProcessor} starts three local Redis nodes for the
 * shop, so {@code mvn -pl sample-app -am spring-boot:run} needs no setup.
 */
@SpringBootApplication
@EnableConfigurationProperties(ShopProperties.class)
public class ShopApplication {

	public static void main(String[] args) {
		SpringApplication.run(ShopApplication.class, args);
	}

}
