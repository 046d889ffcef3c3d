package dev.redlock.autoconfigure;

import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.redlock.core.InvalidRedlockConfigurationException;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockListener;
import dev.redlock.core.RedlockSettings;

/**
 * Builds a {@link Redlock} from {@link RedlockProperties}, reporting invalid values by their property name.
 */
final class RedlockFactory {

	private static final Map<String, String> PROPERTIES = Map.ofEntries(Map.entry("keyPrefix", "key-prefix"),
			Map.entry("defaultTtl", "default-ttl"), Map.entry("defaultWaitTime", "default-wait-time"),
			Map.entry("retryDelay", "retry-delay"), Map.entry("nodeTimeout", "node-timeout"),
			Map.entry("clockDriftFactor", "clock-drift-factor"), Map.entry("maxExtensions", "max-extensions"),
			Map.entry("poolMaxTotal", "pool.max-total"), Map.entry("poolMaxIdle", "pool.max-idle"),
			Map.entry("clientName", "client-name"), Map.entry("nodes", "nodes"),
			Map.entry("restartQuarantine", "restart-quarantine"), Map.entry("maxKeyLength", "max-key-length"),
			Map.entry("maxHold", "max-hold"), Map.entry("autoRenew", "auto-renew"));

	private static final Pattern INDEXED = Pattern.compile("(\\w+)(\\[\\d+])");

	private RedlockFactory() {
	}

	static Redlock create(RedlockProperties properties, List<RedlockListener> listeners) {
		try {
			RedlockSettings settings = new RedlockSettings(properties.getKeyPrefix(), properties.getDefaultTtl(),
					properties.getDefaultWaitTime(), properties.getRetryDelay(), properties.getNodeTimeout(),
					properties.getClockDriftFactor(), properties.getMaxExtensions(), properties.getPool().getMaxTotal(),
					properties.getPool().getMaxIdle(), properties.getClientName(),
					properties.getRestartQuarantine(), properties.getMaxKeyLength(), properties.getMaxHold(),
					properties.isAutoRenew());
			Redlock.Builder builder = Redlock.builder().nodes(properties.getNodes()).settings(settings);
			listeners.forEach(builder::listener);
			return builder.build();
		}
		catch (InvalidRedlockConfigurationException ex) {
			throw new InvalidRedlockPropertyException(propertyName(ex.setting()), ex.reason(), ex);
		}
	}

	static String propertyName(String setting) {
		Matcher indexed = INDEXED.matcher(setting);
		if (indexed.matches()) {
			return propertyName(indexed.group(1)) + indexed.group(2);
		}
		return "redlock." + PROPERTIES.getOrDefault(setting, setting);
	}

}
