package dev.redlock.core.internal.transport;

import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

import javax.net.ssl.SSLParameters;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.InvalidRedlockConfigurationException;
import dev.redlock.core.TlsSettings;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.DefaultJedisClientConfig;

/**
 * The address of one Redis master:
 * {@code redis://[user:password@]host[:port][/database]}, or {@code rediss://…} for TLS.
 *
 * <p>
 * {@link #toString()} and {@link #redacted()} never show the user or password, so an
 * instance can be logged and put into exception messages.
 *
 * @param tls whether the connection uses TLS ({@code rediss://})
 * @param host host name or IP address
 * @param port TCP port (6379 when the URI has none)
 * @param user ACL user name, or {@code null} for the default user
 * @param password password, or {@code null} for none
 * @param database database index selected on every connection
 */
public record RedisNodeUri(boolean tls, String host, int port, @Nullable String user, @Nullable String password,
		int database) {

	/** The port used when a URI names none. */
	public static final int DEFAULT_PORT = 6379;

	private static final Pattern USER_INFO = Pattern.compile("(?<=://).*@");

	/**
	 * Checks the components.
	 */
	public RedisNodeUri {
		if (host == null || host.isBlank()) {
			throw new IllegalArgumentException("Redis node has no host");
		}
		if (port < 1 || port > 65535) {
			throw new IllegalArgumentException("Redis node port must be between 1 and 65535, was " + port);
		}
		if (database < 0) {
			throw new IllegalArgumentException("Redis database index must not be negative, was " + database);
		}
	}

	/**
	 * How to connect to this node: credentials, database and TLS (trust, host name
	 * verification, protocols and cipher suites), each bound by the timeout.
	 * @param clientName the name given to connections, empty for none
	 */
	DefaultJedisClientConfig clientConfig(int timeoutMillis, String clientName, TlsSettings tlsSettings) {
		DefaultJedisClientConfig.Builder config = DefaultJedisClientConfig.builder()
			.connectionTimeoutMillis(timeoutMillis)
			.socketTimeoutMillis(timeoutMillis)
			.database(this.database)
			.ssl(this.tls)
			.clientSetInfoConfig(ClientSetInfoConfig.DISABLED);
		if (this.user != null) {
			config.user(this.user);
		}
		if (this.password != null) {
			config.password(this.password);
		}
		if (!clientName.isEmpty()) {
			config.clientName(clientName);
		}
		if (this.tls) {
			config.sslSocketFactory(tlsSettings.socketFactory());
			// host name verification, protocols and cipher suites, together
			SSLParameters parameters = tlsSettings.sslParameters();
			if (parameters != null) {
				config.sslParameters(parameters);
			}
		}
		return config.build();
	}

	/**
	 * Parses the configured nodes, refusing one server listed twice (it would fake a
	 * quorum).
	 * @param texts the URIs, in configuration order
	 * @return the parsed nodes
	 * @throws InvalidRedlockConfigurationException naming {@code nodes[i]} at fault, or
	 * {@code nodes} when there are none
	 */
	public static List<RedisNodeUri> parseAll(List<String> texts) {
		if (texts.isEmpty()) {
			throw new InvalidRedlockConfigurationException("nodes",
					"no Redis nodes configured; list 3 or 5 independent Redis masters");
		}
		List<RedisNodeUri> parsed = new ArrayList<>(texts.size());
		Map<String, Integer> seen = new HashMap<>();
		for (int i = 0; i < texts.size(); i++) {
			RedisNodeUri node;
			try {
				node = parse(texts.get(i));
			}
			catch (IllegalArgumentException ex) {
				throw new InvalidRedlockConfigurationException("nodes[" + i + "]", ex.getMessage());
			}
			Integer first = seen.putIfAbsent(node.serverIdentity(), i);
			if (first != null) {
				throw new InvalidRedlockConfigurationException("nodes[" + i + "]",
						node.redacted() + " is the same server as nodes[" + first + "] (" + parsed.get(first).redacted()
								+ "); a node listed twice would fake a quorum, list independent masters");
			}
			parsed.add(node);
		}
		return parsed;
	}

	/**
	 * The server this URI points at: one Redis process, whatever its database index or
	 * host alias.
	 */
	private String serverIdentity() {
		String address = this.host.toLowerCase(Locale.ROOT);
		try {
			address = InetAddress.getByName(this.host).getHostAddress();
		}
		catch (UnknownHostException ex) {
			// compare by name; the node will show as unreachable when used
		}
		return address + "|" + this.port;
	}

	/**
	 * Parses a node URI. Errors show the URI with its user information masked.
	 * @param text the URI, e.g. {@code redis://:secret@10.0.0.5:6380/2}
	 * @return the parsed node
	 * @throws IllegalArgumentException if the text is not a valid Redis node URI
	 */
	public static RedisNodeUri parse(String text) {
		if (text == null || text.isBlank()) {
			throw new IllegalArgumentException("Redis node URI is empty");
		}
		String trimmed = text.trim();
		URI uri;
		try {
			uri = new URI(trimmed);
		}
		catch (URISyntaxException ex) {
			// the exception's own message repeats the input, password included: leave it
			// out
			throw invalid(trimmed, "not a valid URI");
		}
		String scheme = (uri.getScheme() != null) ? uri.getScheme().toLowerCase(Locale.ROOT) : null;
		if (!"redis".equals(scheme) && !"rediss".equals(scheme)) {
			throw invalid(trimmed, "expected the scheme redis:// or rediss://");
		}
		if (uri.getHost() == null) {
			throw invalid(trimmed, "no valid host and port (expected redis://host:port)");
		}
		if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
			throw invalid(trimmed, "query parameters and fragments are not supported");
		}
		int port = (uri.getPort() != -1) ? uri.getPort() : DEFAULT_PORT;
		if (port < 1 || port > 65535) {
			throw invalid(trimmed, "port must be between 1 and 65535");
		}
		int database = parseDatabase(trimmed, uri.getPath());
		String user = null;
		String password = null;
		String userInfo = uri.getUserInfo();
		if (userInfo != null && !userInfo.isEmpty()) {
			int colon = userInfo.indexOf(':');
			if (colon < 0) {
				password = userInfo;
			}
			else {
				user = (colon > 0) ? userInfo.substring(0, colon) : null;
				password = userInfo.substring(colon + 1);
				if (password.isEmpty()) {
					password = null;
				}
			}
		}
		return new RedisNodeUri("rediss".equals(scheme), uri.getHost(), port, user, password, database);
	}

	private static int parseDatabase(String text, @Nullable String path) {
		if (path == null || path.isEmpty() || path.equals("/")) {
			return 0;
		}
		String digits = path.substring(1);
		if (!digits.chars().allMatch(Character::isDigit) || digits.length() > 9) {
			throw invalid(text, "the path must be a database index such as /0");
		}
		return Integer.parseInt(digits);
	}

	private static IllegalArgumentException invalid(String text, String reason) {
		return new IllegalArgumentException("Invalid Redis node URI '" + mask(text) + "': " + reason);
	}

	/**
	 * Masks the user information of a URI-like text, for messages about input that could
	 * not be parsed.
	 * @param text any text, usually a node URI
	 * @return the text with everything between {@code ://} and the last {@code @}
	 * replaced by {@code ****}
	 */
	public static String mask(String text) {
		return USER_INFO.matcher(text).replaceFirst("****@");
	}

	/**
	 * Returns {@code host:port}, with IPv6 literals in brackets.
	 * @return the network address of the node
	 */
	public String hostAndPort() {
		String h = (this.host.indexOf(':') >= 0 && !this.host.startsWith("[")) ? "[" + this.host + "]" : this.host;
		return h + ":" + this.port;
	}

	/**
	 * Returns the URI without credentials, e.g. {@code rediss://10.0.0.5:6380/2}.
	 * @return a form safe for logs, exceptions and endpoints
	 */
	public String redacted() {
		return (this.tls ? "rediss://" : "redis://") + hostAndPort()
				+ ((this.database != 0) ? "/" + this.database : "");
	}

	@Override
	public String toString() {
		return redacted();
	}

}
