package dev.redlock.benchmarks;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.IntFunction;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;

/** How the Jedis-based clients of the benchmarks reach a node. */
final class JedisEndpoints {

	/** The configuration of every Jedis connection: a 2 s socket timeout. */
	static final JedisClientConfig CONFIG = DefaultJedisClientConfig.builder().socketTimeoutMillis(2_000).build();

	private JedisEndpoints() {
	}

	/**
	 * Opens one connection to each node.
	 * @param <C> the type of connection
	 * @param uris {@code redis://host:port} per node
	 * @param open opens a connection to an address with {@link #CONFIG}
	 * @param newArray creates the array of connections
	 * @return the connections, in the order of the nodes
	 */
	static <C> C[] connectAll(List<String> uris, BiFunction<HostAndPort, JedisClientConfig, C> open,
			IntFunction<C[]> newArray) {
		return uris.stream().map((uri) -> open.apply(address(uri), CONFIG)).toArray(newArray);
	}

	/**
	 * Closes the connections {@link #connectAll} opened.
	 * @param connections the connections, or {@code null} if none were opened
	 */
	static void closeAll(Closeable @Nullable [] connections) {
		if (connections == null) {
			return;
		}
		for (Closeable connection : connections) {
			try {
				connection.close();
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}
	}

	/**
	 * The host and port of a node.
	 * @param uri {@code redis://host:port}
	 * @return the node's address
	 */
	private static HostAndPort address(String uri) {
		URI parsed = URI.create(uri);
		return new HostAndPort(parsed.getHost(), parsed.getPort());
	}

}
