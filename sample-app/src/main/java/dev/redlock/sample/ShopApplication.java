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
 * It needs {@code redlock.nodes}, e.g.
 * {@code java -jar redlock-sample-app.jar --redlock.nodes[0]=redis://127.0.0.1:7001 ...}.
 * For development with no setup, {@code TestShopApplication} in the test sources starts
 * local Redis nodes for it: {@code mvn -pl sample-app -am spring-boot:test-run}.
 */
@SpringBootApplication
@EnableConfigurationProperties(ShopProperties.class)
public class ShopApplication {

	public static void main(String[] args) {
		SpringApplication.run(ShopApplication.class, args);
	}

}
