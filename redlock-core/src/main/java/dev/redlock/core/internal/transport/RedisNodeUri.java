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

import javax.net.ssl.SSLParameters;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.InvalidRedlockConfigurationException;
import dev.redlock.core.TlsSettings;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;

/**
 * One voter: a Redis master at a fixed address,
 * {@code redis://[user:password@]host[:port][/database]} ({@code rediss://…} for TLS), or
 * a master that a group of sentinels names and follows through failovers,
 * {@code redis-sentinel://[user:password@]host1[:port1][,host2[:port2]…][/database]#masterName}
 * ({@code rediss-sentinel://…} for TLS; {@code ?sentinelMasterId=masterName} names the
 * master as well; {@code ?waitReplicas=n} counts a write there only once n replicas
 * acknowledged it), or a Redis or Valkey Cluster,
 * {@code redis-cluster://[user:password@]seed1[:port1][,seed2[:port2]…][?shards=k]}
 * ({@code rediss-cluster://…} for TLS), which becomes one node per shard when the
 * {@code Redlock} is built ({@link ClusterVoters}); {@code shards} lets it start while no
 * seed answers. The user and password are the master's (every cluster node's); the
 * sentinels are asked without credentials, over TLS when the master is.
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
 * @param sentinel the sentinels that name the master, or {@code null} for a master at a
 * fixed address ({@code host} and {@code port} are then the first sentinel's)
 * @param cluster the seeds of a cluster voter, and for one of its shard nodes which shard
 * it is; {@code null} for other voters ({@code host} and {@code port} are the first
 * seed's for the voter as configured, the shard's primary when the {@code Redlock} was
 * built for a shard node)
 */
public record RedisNodeUri(boolean tls, String host, int port, @Nullable String user, @Nullable String password,
		int database, @Nullable SentinelGroup sentinel, @Nullable ClusterShard cluster) {

	/** The port used when a URI names none. */
	public static final int DEFAULT_PORT = 6379;

	private static final String SENTINEL_MASTER_PARAMETER = "sentinelMasterId=";

	private static final String WAIT_REPLICAS_PARAMETER = "waitReplicas=";

	private static final String SHARDS_PARAMETER = "shards=";

	/** The most shards a cluster voter's URI may say it has: one per slot. */
	private static final int MAX_DECLARED_SHARDS = 16_384;

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
		if (sentinel != null && cluster != null) {
			throw new IllegalArgumentException("a voter is a Sentinel group or a cluster, not both");
		}
	}

	/**
	 * A master at a fixed address, or one that sentinels name.
	 */
	public RedisNodeUri(boolean tls, String host, int port, @Nullable String user, @Nullable String password,
			int database, @Nullable SentinelGroup sentinel) {
		this(tls, host, port, user, password, database, sentinel, null);
	}

	/**
	 * How to connect to this node: credentials, database and TLS (trust, host name
	 * verification, protocols and cipher suites), each bound by the timeout.
	 * @param clientName the name given to connections, empty for none
	 */
	DefaultJedisClientConfig clientConfig(int timeoutMillis, String clientName, TlsSettings tlsSettings) {
		return clientConfig(timeoutMillis, clientName, tlsSettings, true, this.database);
	}

	/**
	 * How to ask this voter's sentinels: TLS as for the master, no database.
	 * @param clientName the name given to connections, empty for none
	 * @param credentials whether to log in with the voter's user and password (for
	 * sentinels that want a password), else none
	 */
	DefaultJedisClientConfig sentinelClientConfig(int timeoutMillis, String clientName, TlsSettings tlsSettings,
			boolean credentials) {
		SentinelGroup group = this.sentinel;
		if (group != null && group.hasOwnCredentials()) {
			return clientConfig(timeoutMillis, clientName, tlsSettings, group.username(), group.password(), 0);
		}
		return clientConfig(timeoutMillis, clientName, tlsSettings, credentials, 0);
	}

	private DefaultJedisClientConfig clientConfig(int timeoutMillis, String clientName, TlsSettings tlsSettings,
			boolean credentials, int databaseIndex) {
		return clientConfig(timeoutMillis, clientName, tlsSettings, credentials ? this.user : null,
				credentials ? this.password : null, databaseIndex);
	}

	private DefaultJedisClientConfig clientConfig(int timeoutMillis, String clientName, TlsSettings tlsSettings,
			@Nullable String loginUser, @Nullable String loginPassword, int databaseIndex) {
		DefaultJedisClientConfig.Builder config = DefaultJedisClientConfig.builder()
			.connectionTimeoutMillis(timeoutMillis)
			.socketTimeoutMillis(timeoutMillis)
			.database(databaseIndex)
			.ssl(this.tls)
			.clientSetInfoConfig(ClientSetInfoConfig.DISABLED);
		if (loginUser != null) {
			config.user(loginUser);
		}
		if (loginPassword != null) {
			config.password(loginPassword);
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
	 * Returns the same voter, its sentinels asked with credentials of their own; a voter
	 * at a fixed address is returned as it is.
	 * @param sentinelUser the sentinels' ACL user, or {@code null} for the default user
	 * @param sentinelPassword their password
	 * @return the voter
	 */
	public RedisNodeUri withSentinelCredentials(@Nullable String sentinelUser, String sentinelPassword) {
		SentinelGroup group = this.sentinel;
		if (group == null) {
			return this;
		}
		return new RedisNodeUri(this.tls, this.host, this.port, this.user, this.password, this.database,
				group.withCredentials(sentinelUser, sentinelPassword));
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
			Integer first = null;
			for (String identity : node.serverIdentities()) {
				Integer earlier = seen.putIfAbsent(identity, i);
				if (first == null && earlier != null && earlier != i) {
					first = earlier;
				}
			}
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
	 * What tells this voter's server apart: for a master at a fixed address that one
	 * Redis process, whatever its database index or host alias; for a Sentinel voter its
	 * master's name at each of its sentinels (two voters sharing a sentinel and a master
	 * name are one master); for a cluster voter as configured each of its seeds, and for
	 * one of its shard nodes the shard's primary.
	 */
	List<String> serverIdentities() {
		if (this.cluster != null && !this.cluster.placed()) {
			return this.cluster.seeds().stream().map((seed) -> address(seed.getHost()) + "|" + seed.getPort()).toList();
		}
		if (this.sentinel == null) {
			return List.of(address(this.host) + "|" + this.port);
		}
		return this.sentinel.sentinels()
			.stream()
			.map((s) -> "sentinel|" + address(s.getHost()) + "|" + s.getPort() + "|" + this.sentinel.masterName())
			.toList();
	}

	private static String address(String host) {
		try {
			return InetAddress.getByName(host).getHostAddress();
		}
		catch (UnknownHostException ex) {
			// compare by name; the node will show as unreachable when used
			return host.toLowerCase(Locale.ROOT);
		}
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
		String lower = trimmed.toLowerCase(Locale.ROOT);
		if (lower.startsWith("redis-sentinel://") || lower.startsWith("rediss-sentinel://")) {
			return parseSentinel(trimmed, lower.startsWith("rediss-"));
		}
		if (lower.startsWith("redis-cluster://") || lower.startsWith("rediss-cluster://")) {
			return parseCluster(trimmed, lower.startsWith("rediss-"));
		}
		URI uri;
		try {
			uri = new URI(trimmed);
		}
		catch (URISyntaxException ex) {
			// the exception's own message repeats the input, password included: leave it
			// out
			throw UriText.invalid(trimmed, "not a valid URI");
		}
		String scheme = (uri.getScheme() != null) ? uri.getScheme().toLowerCase(Locale.ROOT) : null;
		if (!"redis".equals(scheme) && !"rediss".equals(scheme)) {
			throw UriText.invalid(trimmed,
					"expected the scheme redis://, rediss://, redis-sentinel://, rediss-sentinel://, "
							+ "redis-cluster:// or rediss-cluster://");
		}
		if (uri.getHost() == null) {
			throw UriText.invalid(trimmed, "no valid host and port (expected redis://host:port)");
		}
		if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
			throw UriText.invalid(trimmed, "query parameters and fragments are not supported");
		}
		int port = (uri.getPort() != -1) ? uri.getPort() : DEFAULT_PORT;
		if (port < 1 || port > 65535) {
			throw UriText.invalid(trimmed, "port must be between 1 and 65535");
		}
		int database = UriText.database(trimmed, uri.getPath());
		String[] credentials = UriText.credentials(uri.getUserInfo());
		return new RedisNodeUri("rediss".equals(scheme), uri.getHost(), port, credentials[0], credentials[1], database,
				null);
	}

	/**
	 * Parses a Sentinel voter's URI by hand: {@link URI} takes no list of hosts.
	 */
	private static RedisNodeUri parseSentinel(String text, boolean tls) {
		String rest = text.substring(text.indexOf("://") + 3);
		// the user information ends at the last '@': a password's reserved characters
		// never end up in a sentinel's address or the master's name
		int at = rest.lastIndexOf('@');
		String userInfo = (at >= 0) ? UriText.decode(text, rest.substring(0, at)) : null;
		rest = rest.substring(at + 1);
		int fragmentAt = rest.indexOf('#');
		String fragment = (fragmentAt >= 0) ? rest.substring(fragmentAt + 1) : null;
		rest = (fragmentAt >= 0) ? rest.substring(0, fragmentAt) : rest;
		int authorityEnd = rest.length();
		for (int i = 0; i < rest.length(); i++) {
			if (rest.charAt(i) == '/' || rest.charAt(i) == '?') {
				authorityEnd = i;
				break;
			}
		}
		String hosts = rest.substring(0, authorityEnd);
		String pathAndQuery = rest.substring(authorityEnd);
		int queryAt = pathAndQuery.indexOf('?');
		String path = (queryAt >= 0) ? pathAndQuery.substring(0, queryAt) : pathAndQuery;
		String query = (queryAt >= 0) ? pathAndQuery.substring(queryAt + 1) : null;
		if (hosts.isEmpty()) {
			throw UriText.invalid(text, "no sentinels (expected redis-sentinel://host1:port1,host2:port2#masterName)");
		}
		List<HostAndPort> sentinels = UriText.addresses(text, hosts, "sentinel", SentinelGroup.DEFAULT_PORT);
		String masterFromQuery = null;
		int waitReplicas = 0;
		for (String parameter : (query != null) ? query.split("&", -1) : new String[0]) {
			if (parameter.startsWith(SENTINEL_MASTER_PARAMETER) && masterFromQuery == null) {
				masterFromQuery = parameter.substring(SENTINEL_MASTER_PARAMETER.length());
			}
			else if (parameter.startsWith(WAIT_REPLICAS_PARAMETER) && waitReplicas == 0) {
				waitReplicas = waitReplicas(text, parameter.substring(WAIT_REPLICAS_PARAMETER.length()));
			}
			else {
				throw UriText.invalid(text,
						"the query parameters supported are sentinelMasterId and waitReplicas, each once");
			}
		}
		String masterName = masterName(text, fragment, masterFromQuery);
		int database = UriText.database(text, path);
		String[] credentials = UriText.credentials(userInfo);
		HostAndPort first = sentinels.get(0);
		return new RedisNodeUri(tls, first.getHost(), first.getPort(), credentials[0], credentials[1], database,
				new SentinelGroup(masterName, sentinels, waitReplicas));
	}

	/**
	 * Parses a cluster voter's URI by hand: {@link URI} takes no list of hosts. A cluster
	 * has database 0 only, so a path names no other; a query other than {@code shards=k},
	 * and a fragment, are refused.
	 */
	private static RedisNodeUri parseCluster(String text, boolean tls) {
		String rest = text.substring(text.indexOf("://") + 3);
		int at = rest.lastIndexOf('@');
		String userInfo = (at >= 0) ? UriText.decode(text, rest.substring(0, at)) : null;
		rest = rest.substring(at + 1);
		int authorityEnd = rest.length();
		for (int i = 0; i < rest.length(); i++) {
			char c = rest.charAt(i);
			if (c == '/' || c == '?' || c == '#') {
				authorityEnd = i;
				break;
			}
		}
		String hosts = rest.substring(0, authorityEnd);
		String tail = rest.substring(authorityEnd);
		if (hosts.isEmpty()) {
			throw UriText.invalid(text, "no seed nodes (expected redis-cluster://host1:port1,host2:port2)");
		}
		if (tail.indexOf('#') >= 0) {
			throw UriText.invalid(text, "fragments are not supported");
		}
		int queryAt = tail.indexOf('?');
		int shards = (queryAt >= 0) ? declaredShards(text, tail.substring(queryAt + 1)) : 0;
		if (UriText.database(text, (queryAt >= 0) ? tail.substring(0, queryAt) : tail) != 0) {
			throw UriText.invalid(text, "a cluster has database 0 only");
		}
		List<HostAndPort> seeds = UriText.addresses(text, hosts, "seed", ClusterShard.DEFAULT_PORT);
		String[] credentials = UriText.credentials(userInfo);
		HostAndPort first = seeds.get(0);
		return new RedisNodeUri(tls, first.getHost(), first.getPort(), credentials[0], credentials[1], 0, null,
				new ClusterShard(seeds, shards));
	}

	/**
	 * The cluster's shard count a cluster voter's query gives, {@code shards=k}: how many
	 * shard nodes to make when no seed answers at startup.
	 */
	private static int declaredShards(String text, String query) {
		if (!query.startsWith(SHARDS_PARAMETER) || query.indexOf('&') >= 0) {
			throw UriText.invalid(text,
					"the only query parameter supported is shards (how many shards the cluster has)");
		}
		String count = query.substring(SHARDS_PARAMETER.length());
		try {
			int shards = Integer.parseInt(count);
			if (shards >= 1 && shards <= MAX_DECLARED_SHARDS) {
				return shards;
			}
		}
		catch (NumberFormatException ex) {
			// refused below
		}
		throw UriText.invalid(text,
				"shards must be a number of shards from 1 to " + MAX_DECLARED_SHARDS + ", not '" + count + "'");
	}

	/**
	 * Returns one shard node of this cluster voter, at the address of its primary now.
	 * @param primary where the shard's primary answers
	 * @param shard which shard it is, and the slots it serves
	 * @return the shard node
	 */
	RedisNodeUri inShard(HostAndPort primary, ClusterShard shard) {
		return new RedisNodeUri(this.tls, primary.getHost(), primary.getPort(), this.user, this.password, 0, null,
				shard);
	}

	/**
	 * The number of {@code waitReplicas=n}: from 1 to
	 * {@link SentinelGroup#MAX_WAIT_REPLICAS}.
	 */
	private static int waitReplicas(String text, String count) {
		try {
			int replicas = Integer.parseInt(count);
			if (replicas >= 1 && replicas <= SentinelGroup.MAX_WAIT_REPLICAS) {
				return replicas;
			}
		}
		catch (NumberFormatException ex) {
			// refused below
		}
		throw UriText.invalid(text, "waitReplicas must be a number of replicas from 1 to "
				+ SentinelGroup.MAX_WAIT_REPLICAS + ", not '" + count + "'");
	}

	/**
	 * The master's name: the fragment, or the query parameter {@code sentinelMasterId}.
	 * @param fromQuery the value of {@code sentinelMasterId}, {@code null} when not given
	 */
	private static String masterName(String text, @Nullable String fragment, @Nullable String fromQuery) {
		String fromFragment = (fragment != null && !fragment.isEmpty()) ? fragment : null;
		if (fromFragment != null && fromQuery != null && !fromFragment.equals(fromQuery)) {
			throw UriText.invalid(text, "two master names ('" + fromFragment + "' and '" + fromQuery + "')");
		}
		String name = (fromFragment != null) ? fromFragment : fromQuery;
		if (name == null || name.isBlank()) {
			throw UriText.invalid(text,
					"no master name (expected redis-sentinel://host1:port1,host2:port2#masterName)");
		}
		return name;
	}

	/**
	 * Returns the voter's name in metrics, events and thread names: {@code host:port} for
	 * a master at a fixed address, {@code masterName@sentinelHost:port} (its first
	 * sentinel) for a Sentinel voter, {@code shard<i>@seedHost:port} (its first seed) for
	 * a cluster voter's shard node.
	 * @return the name, without credentials
	 */
	public String name() {
		if (this.cluster != null) {
			HostAndPort seed = this.cluster.seeds().get(0);
			return (this.cluster.placed() ? "shard" + this.cluster.index() : "cluster") + "@"
					+ SentinelGroup.format(seed);
		}
		return (this.sentinel != null) ? this.sentinel.masterName() + "@" + hostAndPort() : hostAndPort();
	}

	/**
	 * Returns how many replicas must acknowledge a write that counts on this voter
	 * ({@code ?waitReplicas=n} of a Sentinel voter).
	 * @return the count, 0 when none is waited for
	 */
	public int waitReplicas() {
		return (this.sentinel != null) ? this.sentinel.waitReplicas() : 0;
	}

	/**
	 * Returns what kind of voter this is: {@code standalone} (a master at a fixed
	 * address), {@code sentinel} or {@code cluster}.
	 * @return the kind, as health and the endpoint show it
	 */
	public String kind() {
		return (this.cluster != null) ? "cluster" : (this.sentinel != null) ? "sentinel" : "standalone";
	}

	/**
	 * Returns {@code host:port} (the first sentinel's, for a Sentinel voter), with IPv6
	 * literals in brackets.
	 * @return the network address of the node
	 */
	public String hostAndPort() {
		String h = (this.host.indexOf(':') >= 0 && !this.host.startsWith("[")) ? "[" + this.host + "]" : this.host;
		return h + ":" + this.port;
	}

	/**
	 * Returns the URI without credentials, e.g. {@code rediss://10.0.0.5:6380/2}; for a
	 * cluster voter's shard node, the voter's URI followed by the shard and its slots,
	 * {@code redis-cluster://10.0.0.5:6379 [shard 0 of 3, slots 0-5460]}.
	 * @return a form safe for logs, exceptions and endpoints
	 */
	public String redacted() {
		if (this.cluster != null) {
			String voter = (this.tls ? "rediss-cluster://" : "redis-cluster://") + this.cluster.addresses()
					+ ((this.cluster.declaredShards() > 0) ? "?" + SHARDS_PARAMETER + this.cluster.declaredShards()
							: "");
			if (!this.cluster.placed()) {
				return voter;
			}
			// a provisional shard's slots are known once its cluster answers
			String slots = this.cluster.provisional() ? "" : ", slots " + this.cluster.slotText();
			return voter + " [shard " + this.cluster.index() + " of " + this.cluster.count() + slots + "]";
		}
		String database = (this.database != 0) ? "/" + this.database : "";
		if (this.sentinel != null) {
			String wait = (this.sentinel.waitReplicas() > 0)
					? "?" + WAIT_REPLICAS_PARAMETER + this.sentinel.waitReplicas() : "";
			return (this.tls ? "rediss-sentinel://" : "redis-sentinel://") + this.sentinel.addresses() + database + wait
					+ "#" + this.sentinel.masterName();
		}
		return (this.tls ? "rediss://" : "redis://") + hostAndPort() + database;
	}

	@Override
	public String toString() {
		return redacted();
	}

}
