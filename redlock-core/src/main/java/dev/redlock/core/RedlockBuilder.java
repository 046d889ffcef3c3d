package dev.redlock.core;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * Builds a {@link Redlock} from node URIs and settings.
 */
public final class RedlockBuilder {

	private final List<String> nodes = new ArrayList<>();

	private RedlockSettings settings = RedlockSettings.defaults();

	private LongSupplier ticker = System::nanoTime;

	private final List<RedlockListener> listeners = new ArrayList<>();

	private TlsSettings tls = TlsSettings.jvmDefault();

	/**
	 * Sets how {@code rediss://} nodes are reached; the JVM's trust store with host name
	 * verification when not called.
	 * @param tls the TLS settings
	 * @return this builder
	 */
	public RedlockBuilder tls(TlsSettings tls) {
		this.tls = Objects.requireNonNull(tls, "tls");
		return this;
	}

	RedlockBuilder() {
	}

	/**
	 * Adds a listener, told about every acquisition, release, extension and node request.
	 * @param listener the listener
	 * @return this builder
	 */
	public RedlockBuilder listener(RedlockListener listener) {
		this.listeners.add(Objects.requireNonNull(listener, "listener"));
		return this;
	}

	/**
	 * Adds a node.
	 * @param uri {@code redis://[user:password@]host:port[/db]} or {@code rediss://…}
	 * @return this builder
	 */
	public RedlockBuilder node(String uri) {
		this.nodes.add(uri);
		return this;
	}

	/**
	 * Adds nodes.
	 * @param uris node URIs, see {@link #node(String)}
	 * @return this builder
	 */
	public RedlockBuilder nodes(List<String> uris) {
		this.nodes.addAll(uris);
		return this;
	}

	/**
	 * Sets the settings.
	 * @param settings the settings; {@link RedlockSettings#defaults()} when not called
	 * @return this builder
	 */
	public RedlockBuilder settings(RedlockSettings settings) {
		this.settings = Objects.requireNonNull(settings, "settings");
		return this;
	}

	/**
	 * Sets the monotonic clock used for validity and wait times, for tests that need to
	 * control time.
	 * @param nanoTicker returns nanoseconds, like {@link System#nanoTime()} (the default)
	 * @return this builder
	 */
	public RedlockBuilder ticker(LongSupplier nanoTicker) {
		this.ticker = Objects.requireNonNull(nanoTicker, "ticker");
		return this;
	}

	/**
	 * Checks the nodes and builds the instance. No connection is opened yet.
	 * @return a new {@code Redlock}
	 * @throws InvalidRedlockConfigurationException if there are no nodes, a URI is
	 * malformed, or one server is listed twice (which would fake a quorum)
	 */
	public Redlock build() {
		if (this.nodes.isEmpty()) {
			throw new InvalidRedlockConfigurationException("nodes",
					"no Redis nodes configured; list 3 or 5 independent Redis masters");
		}
		List<RedisNodeUri> parsed = new ArrayList<>(this.nodes.size());
		Map<String, Integer> seen = new HashMap<>();
		for (int i = 0; i < this.nodes.size(); i++) {
			RedisNodeUri node;
			try {
				node = RedisNodeUri.parse(this.nodes.get(i));
			}
			catch (IllegalArgumentException ex) {
				throw new InvalidRedlockConfigurationException("nodes[" + i + "]", ex.getMessage());
			}
			Integer first = seen.putIfAbsent(serverIdentity(node), i);
			if (first != null) {
				throw new InvalidRedlockConfigurationException("nodes[" + i + "]",
						node.redacted() + " is the same server as nodes[" + first + "] (" + parsed.get(first).redacted()
								+ "); a node listed twice would fake a quorum, list independent masters");
			}
			parsed.add(node);
		}
		return new Redlock(parsed, this.settings, this.ticker, this.listeners, this.tls);
	}

	/**
	 * The server a URI points at: one Redis process, whatever its database index or host
	 * alias.
	 */
	private static String serverIdentity(RedisNodeUri node) {
		String host = node.host().toLowerCase(Locale.ROOT);
		try {
			host = InetAddress.getByName(node.host()).getHostAddress();
		}
		catch (UnknownHostException ex) {
			// compare by name; the node will show as unreachable when used
		}
		return host + "|" + node.port();
	}

}
