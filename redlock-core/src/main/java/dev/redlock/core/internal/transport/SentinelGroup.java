package dev.redlock.core.internal.transport;

import java.util.List;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.HostAndPort;

/**
 * The Sentinel deployment that names a voter's master: the master's name as the sentinels
 * know it, the sentinels to ask, in configuration order, and the credentials of the
 * sentinels when they have their own. {@link #toString()} never shows the password.
 *
 * @param masterName the name the sentinels monitor the master under
 * @param sentinels the sentinels' addresses, at least one
 * @param username the sentinels' ACL user, or {@code null} for the default user
 * @param password the sentinels' own password, or {@code null}: then they are asked
 * without credentials, or with the master's once one answers {@code NOAUTH}
 * @param waitReplicas how many replicas must acknowledge each write that counts (a grant,
 * an extension, a fencing counter raised) for it to count, {@code WAIT} sent right behind
 * it; 0 for none ({@code ?waitReplicas=n})
 */
public record SentinelGroup(String masterName, List<HostAndPort> sentinels, @Nullable String username,
		@Nullable String password, int waitReplicas) {

	/** The most replicas a voter may wait for. */
	public static final int MAX_WAIT_REPLICAS = 100;

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
		if (waitReplicas < 0 || waitReplicas > MAX_WAIT_REPLICAS) {
			throw new IllegalArgumentException(
					"waitReplicas must be from 1 to " + MAX_WAIT_REPLICAS + " (0 for none), was " + waitReplicas);
		}
	}

	/**
	 * A group whose sentinels have no credentials of their own.
	 * @param masterName the name the sentinels monitor the master under
	 * @param sentinels the sentinels' addresses, at least one
	 */
	public SentinelGroup(String masterName, List<HostAndPort> sentinels) {
		this(masterName, sentinels, null, null, 0);
	}

	/**
	 * A group whose sentinels have no credentials of their own.
	 * @param masterName the name the sentinels monitor the master under
	 * @param sentinels the sentinels' addresses, at least one
	 * @param waitReplicas how many replicas must acknowledge each write that counts, 0
	 * for none
	 */
	public SentinelGroup(String masterName, List<HostAndPort> sentinels, int waitReplicas) {
		this(masterName, sentinels, null, null, waitReplicas);
	}

	/**
	 * Returns the same group, its sentinels asked with credentials of their own.
	 * @param username the sentinels' ACL user, or {@code null} for the default user
	 * @param password their password
	 * @return the group
	 */
	SentinelGroup withCredentials(@Nullable String username, String password) {
		return new SentinelGroup(this.masterName, this.sentinels, username, password, this.waitReplicas);
	}

	/** Whether the sentinels have credentials of their own. */
	boolean hasOwnCredentials() {
		return this.password != null;
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

	@Override
	public String toString() {
		return "SentinelGroup[" + this.masterName + "@" + addresses()
				+ (hasOwnCredentials() ? ", with credentials of their own" : "")
				+ ((this.waitReplicas > 0) ? ", waiting for " + this.waitReplicas + " replicas" : "") + "]";
	}

}
