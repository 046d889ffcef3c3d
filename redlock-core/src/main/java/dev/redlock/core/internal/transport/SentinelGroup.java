package dev.redlock.core.internal.transport;

import java.util.List;
import java.util.stream.Collectors;

import redis.clients.jedis.HostAndPort;

/**
 * The Sentinel deployment that names a voter's master: the master's name as the sentinels
 * know it, and the sentinels to ask, in configuration order.
 *
 * @param masterName the name the sentinels monitor the master under
 * @param sentinels the sentinels' addresses, at least one
 */
public record SentinelGroup(String masterName, List<HostAndPort> sentinels) {

	/** The port used when a sentinel's address names none. */
	public static final int DEFAULT_PORT = 26379;

	/**
	 * Checks the components.
	 */
	public SentinelGroup {
		if (masterName == null || masterName.isBlank()) {
			throw new IllegalArgumentException("a Sentinel voter needs the master's name");
		}
		if (sentinels == null || sentinels.isEmpty()) {
			throw new IllegalArgumentException("a Sentinel voter needs at least one sentinel");
		}
		sentinels = List.copyOf(sentinels);
	}

	/**
	 * Returns the sentinels as {@code host:port,host:port}, IPv6 literals in brackets.
	 * @return the addresses, in configuration order
	 */
	public String addresses() {
		return this.sentinels.stream().map(SentinelGroup::format).collect(Collectors.joining(","));
	}

	/**
	 * Returns one address as {@code host:port}, an IPv6 literal in brackets.
	 * @param address the address
	 * @return its text
	 */
	static String format(HostAndPort address) {
		String host = address.getHost();
		return ((host.indexOf(':') >= 0 && !host.startsWith("[")) ? "[" + host + "]" : host) + ":" + address.getPort();
	}

}
