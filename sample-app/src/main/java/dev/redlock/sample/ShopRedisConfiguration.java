package dev.redlock.sample;

import java.net.URI;
import java.time.Duration;
import java.util.List;

import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.RedisClient;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The shop's own Redis client, for its data (the locks use the Redlock bean and its own
 * connections). The stock lives on {@code shop.redis-uri}, or on the first of
 * {@code redlock.nodes} when that is not set.
 */
@Configuration(proxyBeanMethods = false)
class ShopRedisConfiguration {

	@Bean(destroyMethod = "close")
	RedisClient shopRedisClient(ShopProperties properties, Environment environment) {
		URI uri = URI.create(shopRedisUri(properties, environment));
		ConnectionPoolConfig pool = new ConnectionPoolConfig();
		pool.setMaxTotal(64);
		pool.setMaxIdle(16);
		pool.setMaxWait(Duration.ofSeconds(2));
		DefaultJedisClientConfig client = DefaultJedisClientConfig.builder()
			.clientName("redlock-sample-shop")
			.connectionTimeoutMillis(2000)
			.socketTimeoutMillis(2000)
			.build();
		// clientConfig first: fromURI keeps it and adds what the URI says (credentials,
		// database, TLS)
		return RedisClient.builder().clientConfig(client).fromURI(uri).poolConfig(pool).build();
	}

	@Bean
	StockStore stockStore(RedisClient shopRedisClient, ShopProperties properties) {
		StockStore store = new StockStore(shopRedisClient);
		for (String sku : properties.skus()) {
			store.seedIfAbsent(sku, properties.initialStock());
		}
		return store;
	}

	static String shopRedisUri(ShopProperties properties, Environment environment) {
		if (!properties.redisUri().isBlank()) {
			return properties.redisUri().trim();
		}
		List<String> nodes = Binder.get(environment)
			.bind("redlock.nodes", Bindable.listOf(String.class))
			.orElse(List.of());
		if (nodes.isEmpty()) {
			throw new IllegalStateException(
					"Set shop.redis-uri or redlock.nodes: the shop needs a Redis for its stock");
		}
		return nodes.get(0).trim();
	}

}
