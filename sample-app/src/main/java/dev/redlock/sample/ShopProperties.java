package dev.redlock.sample;

import java.time.Duration;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of the sample shop.
 *
 * @param redisUri Redis holding the shop's stock, e.g. "redis://127.0.0.1:6379"; empty
 * means the first of redlock.nodes
 * @param initialStock stock of every SKU when it is first seeded or reset
 * @param skus the SKUs on sale
 * @param thinkTime pause between reading the stock and writing it back, standing in for
 * real work (pricing, payment); it widens the race that the unlocked endpoint loses
 */
@ConfigurationProperties("shop")
public record ShopProperties(@DefaultValue("") String redisUri, @DefaultValue("50") int initialStock, @DefaultValue( {
		"apple", "pear", "plum" }) List<String> skus, @DefaultValue("5ms") Duration thinkTime){

	public ShopProperties {
		redisUri = (redisUri != null) ? redisUri.trim() : "";
		if (initialStock < 0) {
			throw new IllegalArgumentException("shop.initial-stock must be 0 or more, got " + initialStock);
		}
		if (thinkTime.isNegative()) {
			throw new IllegalArgumentException("shop.think-time must not be negative, got " + thinkTime);
		}
		skus = List.copyOf(skus);
	}

}
