package dev.redlock.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.PropertyMapper;
import org.springframework.boot.ssl.NoSuchSslBundleException;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.boot.ssl.SslOptions;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.InvalidRedlockConfigurationException;
import dev.redlock.core.NodeFinding;
import dev.redlock.core.Redlock;

import dev.redlock.core.RedlockListener;
import dev.redlock.core.RedlockSettings;
import dev.redlock.core.TlsSettings;

/**
 * Builds a {@link Redlock} from {@link RedlockProperties}, reporting invalid values by
 * their property name.
 */
final class RedlockFactory {

	private static final Logger logger = LoggerFactory.getLogger(RedlockFactory.class);

	private static final Map<String, String> PROPERTIES = Map.ofEntries(Map.entry("keyPrefix", "key-prefix"),
			Map.entry("defaultTtl", "default-ttl"), Map.entry("defaultWaitTime", "default-wait-time"),
			Map.entry("retryDelay", "retry-delay"), Map.entry("nodeTimeout", "node-timeout"),
			Map.entry("clockDriftFactor", "clock-drift-factor"), Map.entry("maxExtensions", "max-extensions"),
			Map.entry("poolMaxTotal", "pool.max-total"), Map.entry("poolMaxIdle", "pool.max-idle"),
			Map.entry("poolMinIdle", "pool.min-idle"), Map.entry("clientName", "client-name"),
			Map.entry("nodes", "nodes"), Map.entry("restartQuarantine", "restart-quarantine"),
			Map.entry("maxKeyLength", "max-key-length"), Map.entry("maxHold", "max-hold"),
			Map.entry("autoRenew", "auto-renew"), Map.entry("clockTolerance", "clock-tolerance"),
			Map.entry("transport", "transport"));

	private static final Pattern INDEXED = Pattern.compile("(\\w+)(\\[\\d+])");

	private RedlockFactory() {
	}

	static Redlock create(RedlockProperties properties, List<RedlockListener> listeners) {
		return create(properties, listeners, null);
	}

	static Redlock create(RedlockProperties properties, List<RedlockListener> listeners,
			@Nullable SslBundles sslBundles) {
		try {
			Redlock.Builder builder = Redlock.builder()
				.nodes(voters(properties.nodes()))
				.settings(settings(properties));
			listeners.forEach(builder::listener);
			String sentinelPassword = properties.sentinel().password();
			if (sentinelPassword != null && !sentinelPassword.isEmpty()) {
				builder.sentinelCredentials(properties.sentinel().username(), sentinelPassword);
			}
			String bundle = properties.ssl().bundle();
			if (bundle != null && !bundle.isBlank()) {
				builder.tls(tls(bundle.trim(), sslBundles));
			}
			return verified(builder.build());
		}
		catch (InvalidRedlockConfigurationException ex) {
			throw new InvalidRedlockPropertyException(propertyName(ex.setting()), ex.reason(), ex);
		}
	}

	private static RedlockSettings settings(RedlockProperties properties) {
		RedlockSettings.Builder settings = RedlockSettings.builder();
		PropertyMapper map = PropertyMapper.get();
		map.from(properties::keyPrefix).to(settings::keyPrefix);
		map.from(properties::defaultTtl).to(settings::defaultTtl);
		map.from(properties::defaultWaitTime).to(settings::defaultWaitTime);
		map.from(properties::retryDelay).to(settings::retryDelay);
		map.from(properties::nodeTimeout).to(settings::nodeTimeout);
		map.from(properties::clockDriftFactor).to(settings::clockDriftFactor);
		map.from(properties::maxExtensions).to(settings::maxExtensions);
		map.from(properties.pool()::maxTotal).to(settings::poolMaxTotal);
		map.from(properties.pool()::maxIdle).to(settings::poolMaxIdle);
		map.from(properties.pool()::minIdle).to(settings::poolMinIdle);
		map.from(properties::clientName).to(settings::clientName);
		map.from(properties::restartQuarantine).to(settings::restartQuarantine);
		map.from(properties::maxKeyLength).to(settings::maxKeyLength);
		map.from(properties::maxHold).to(settings::maxHold);
		map.from(properties::autoRenew).to(settings::autoRenew);
		map.from(properties::clockTolerance).to(settings::clockTolerance);
		map.from(properties::transport).to(settings::transport);
		return settings.build();
	}

	private static TlsSettings tls(String bundle, @Nullable SslBundles sslBundles) {
		if (sslBundles == null) {
			throw new InvalidRedlockPropertyException("redlock.ssl.bundle",
					"SSL bundle '" + bundle + "' is named but no SslBundles bean exists", null);
		}
		try {
			return tls(sslBundles.getBundle(bundle));
		}
		catch (NoSuchSslBundleException ex) {
			throw new InvalidRedlockPropertyException("redlock.ssl.bundle", "no SSL bundle named '" + bundle
					+ "'; define it under spring.ssl.bundle.pem." + bundle + " or spring.ssl.bundle.jks." + bundle, ex);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidRedlockPropertyException("redlock.ssl.bundle",
					"the options of SSL bundle '" + bundle + "' are invalid: " + ex.getMessage(), ex);
		}
	}

	/**
	 * The bundle's trust and key material, and its options: the enabled protocols and
	 * cipher suites, when it names them.
	 */
	static TlsSettings tls(SslBundle bundle) {
		TlsSettings tls = TlsSettings.of(bundle.createSslContext());
		SslOptions options = bundle.getOptions();
		String[] protocols = options.getEnabledProtocols();
		if (protocols != null && protocols.length > 0) {
			tls = tls.withProtocols(protocols);
		}
		String[] ciphers = options.getCiphers();
		if (ciphers != null && ciphers.length > 0) {
			tls = tls.withCiphers(ciphers);
		}
		return tls;
	}

	/**
	 * Checks the nodes once at startup ({@link Redlock#verifyNodes()}): errors (a server
	 * listed twice under different addresses, a replica) fail startup naming the node's
	 * property; warnings (unreachable now, an even or too small count, an evicting memory
	 * policy, a short TTL) are logged, so an application can start while a minority of
	 * nodes is down.
	 */
	static Redlock verified(Redlock redlock) {
		List<NodeFinding> findings;
		try {
			findings = redlock.verifyNodes();
		}
		catch (RuntimeException ex) {
			redlock.close();
			throw ex;
		}
		for (NodeFinding finding : findings) {
			String property = (finding.node() != null) ? "redlock.nodes[" + finding.node() + "]" : "redlock.nodes";
			if (finding.severity() == NodeFinding.Severity.ERROR) {
				redlock.close();
				throw new InvalidRedlockPropertyException(property, finding.message(), null);
			}
			logger.warn("Redlock configuration, property '{}': {}", property, finding.message());
		}
		return redlock;
	}

	static String propertyName(String setting) {
		Matcher indexed = INDEXED.matcher(setting);
		if (indexed.matches()) {
			return propertyName(indexed.group(1)) + indexed.group(2);
		}
		return "redlock." + PROPERTIES.getOrDefault(setting, setting);
	}

	/**
	 * Puts back together the Sentinel and cluster voters that binding split: a
	 * comma-separated {@code redlock.nodes} value (or {@code REDLOCK_NODES}) is split at
	 * every comma, also those between a Sentinel voter's sentinels or a cluster voter's
	 * seeds. An element without a scheme that follows a {@code redis-sentinel://} or
	 * {@code rediss-sentinel://} element still lacking its master's name is one more
	 * sentinel of it; one that follows a {@code redis-cluster://} or
	 * {@code rediss-cluster://} element is one more seed of it.
	 * @param bound the elements as bound
	 * @return one element per voter
	 */
	static List<String> voters(List<String> bound) {
		List<String> voters = new ArrayList<>(bound.size());
		for (String element : bound) {
			int last = voters.size() - 1;
			if (last >= 0 && awaitsMoreAddresses(voters.get(last)) && element != null && !element.contains("://")) {
				voters.set(last, voters.get(last) + "," + element.trim());
			}
			else {
				voters.add(element);
			}
		}
		return voters;
	}

	/**
	 * Whether an element is a Sentinel voter cut off before its query or its master's
	 * name, which end its sentinels, or a cluster voter, whose seeds only its query
	 * ({@code ?shards=k}) ends.
	 */
	private static boolean awaitsMoreAddresses(@Nullable String element) {
		if (element == null) {
			return false;
		}
		String uri = element.trim().toLowerCase(Locale.ROOT);
		if (uri.startsWith("redis-cluster://") || uri.startsWith("rediss-cluster://")) {
			return !uri.contains("?");
		}
		// a query (sentinelMasterId, waitReplicas) ends the sentinels as well
		return (uri.startsWith("redis-sentinel://") || uri.startsWith("rediss-sentinel://")) && !uri.contains("#")
				&& !uri.contains("?");
	}

}
