package dev.redlock.core.internal.transport;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.TlsSettings;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Where a voter's master is now. A master at a fixed address never moves. A Sentinel
 * voter's master is the one its sentinels name
 * ({@code SENTINEL GET-MASTER-ADDR-BY-NAME}), taken only once the server itself says it
 * is a master ({@code ROLE}): a sentinel can answer with, or announce, a master that is
 * out of date. Every move counts a new {@link #generation()}, so that connections to the
 * master left behind are closed rather than reused, and tells the voter's connections
 * ({@link #onMove}).
 */
final class MasterAddress {

	private static final Logger logger = LoggerFactory.getLogger(MasterAddress.class);

	private static final byte[] MASTER = "master".getBytes(StandardCharsets.US_ASCII);

	private final RedisNodeUri uri;

	private final String clientName;

	private final TlsSettings tls;

	/** The fixed address, or {@code null} for a Sentinel voter. */
	private final @Nullable Current fixed;

	/** The sentinels, the one that last answered first. */
	private volatile List<HostAndPort> sentinels;

	private volatile @Nullable Current current;

	/** The last generation counted, and its address; guarded by {@code this}. */
	private int lastGeneration = -1;

	private @Nullable HostAndPort lastAddress;

	private volatile Runnable moved = () -> {
	};

	/**
	 * A master's address, with the generation it counts as.
	 *
	 * @param address the server's host and port
	 * @param generation how many moves of the voter's master came before it
	 */
	record Current(HostAndPort address, int generation) {
	}

	MasterAddress(RedisNodeUri uri, String clientName, TlsSettings tls) {
		this.uri = uri;
		this.clientName = clientName;
		this.tls = tls;
		SentinelGroup group = uri.sentinel();
		this.fixed = (group == null) ? new Current(new HostAndPort(uri.host(), uri.port()), 0) : null;
		this.sentinels = (group != null) ? group.sentinels() : List.of();
	}

	/** Whether the master can move: a Sentinel voter's. */
	boolean followsFailovers() {
		return this.fixed == null;
	}

	/** Tells a task each time the master moves (not at the first resolution). */
	void onMove(Runnable task) {
		this.moved = task;
	}

	/**
	 * Returns the master's generation now: a connection opened to an earlier one is not
	 * reused.
	 */
	int generation() {
		Current known = (this.fixed != null) ? this.fixed : this.current;
		return (known != null) ? known.generation() : -1;
	}

	/**
	 * Returns the master's address now, or {@code null} while a Sentinel voter's is not
	 * known.
	 */
	@Nullable HostAndPort known() {
		Current known = (this.fixed != null) ? this.fixed : this.current;
		return (known != null) ? known.address() : null;
	}

	/**
	 * Returns where to connect: the fixed address, the master known, or the one the
	 * sentinels name now.
	 * @param timeoutMillis the bound for each sentinel's answer and each check
	 * @throws JedisConnectionException when no sentinel names a master that says it is
	 * one ({@link SentinelMasterUnknownException} when every sentinel that answered knows
	 * no master of that name)
	 */
	Current address(int timeoutMillis) {
		Current known = (this.fixed != null) ? this.fixed : this.current;
		return (known != null) ? known : resolve(timeoutMillis);
	}

	/**
	 * Checks that a new connection's server is a master, for a Sentinel voter: a server
	 * that is a replica now is forgotten, so the next connection asks the sentinels
	 * again. A server that refuses {@code ROLE} is taken as it is.
	 * @throws JedisConnectionException if the server is not a master
	 */
	void verifyMaster(PipelinedConnection connection, int generation) {
		if (this.fixed != null) {
			return;
		}
		String role = role(connection);
		if (role != null && !role.equals("master")) {
			forget(generation);
			throw new JedisConnectionException(this.uri.redacted() + ": " + SentinelGroup.format(connection.address())
					+ " is a " + role + " now, not the master; asking the sentinels again");
		}
	}

	/**
	 * Asks the sentinels where the master is, and moves there if it changed.
	 * @param timeoutMillis the bound for each sentinel's answer and the new master's
	 * check
	 */
	void refresh(int timeoutMillis) {
		if (this.fixed == null) {
			resolve(timeoutMillis);
		}
	}

	/**
	 * Hears a sentinel announce a new master ({@code +switch-master}): moves there if the
	 * server says it is a master, else asks the sentinels (an announcement can be out of
	 * date).
	 */
	void announced(HostAndPort address, int timeoutMillis) {
		Current known = this.current;
		if (known != null && known.address().equals(address)) {
			return;
		}
		if (isMaster(address, timeoutMillis)) {
			moveTo(address, "announced by a sentinel");
		}
		else {
			logger.info("Redlock voter {}: a sentinel announced {} as its master, which is not one; asking the "
					+ "sentinels", this.uri.redacted(), SentinelGroup.format(address));
			resolve(timeoutMillis);
		}
	}

	/** The sentinels, in the order they are asked now. */
	List<HostAndPort> sentinels() {
		return this.sentinels;
	}

	private Current resolve(int timeoutMillis) {
		SentinelGroup group = this.uri.sentinel();
		List<String> failures = new ArrayList<>();
		int unknown = 0;
		for (HostAndPort sentinel : this.sentinels) {
			HostAndPort named;
			try {
				named = askSentinel(sentinel, group.masterName(), timeoutMillis);
			}
			catch (RuntimeException ex) {
				failures.add(SentinelGroup.format(sentinel) + ": " + ex.getMessage());
				continue;
			}
			if (named == null) {
				unknown++;
				failures.add(SentinelGroup.format(sentinel) + ": no master named '" + group.masterName() + "'");
				continue;
			}
			Current known = this.current;
			if (known != null && known.address().equals(named)) {
				answeredFirst(sentinel);
				return known;
			}
			if (isMaster(named, timeoutMillis)) {
				answeredFirst(sentinel);
				return moveTo(named, "named by the sentinel " + SentinelGroup.format(sentinel));
			}
			failures.add(SentinelGroup.format(sentinel) + ": named " + SentinelGroup.format(named)
					+ ", which is not a master");
		}
		String message = this.uri.redacted() + ": no sentinel named a master [" + String.join("; ", failures) + "]";
		if (unknown == this.sentinels.size()) {
			throw new SentinelMasterUnknownException(message);
		}
		throw new JedisConnectionException(message);
	}

	private synchronized Current moveTo(HostAndPort address, String how) {
		Current known = this.current;
		if (known != null && known.address().equals(address)) {
			return known;
		}
		HostAndPort previous = this.lastAddress;
		Current moved = new Current(address, ++this.lastGeneration);
		this.lastAddress = address;
		this.current = moved;
		if (previous == null || previous.equals(address)) {
			logger.debug("Redlock voter {}: master at {} ({})", this.uri.redacted(), SentinelGroup.format(address),
					how);
			return moved;
		}
		logger.warn(
				"Redlock voter {}: master moved from {} to {} ({}); the voter counts again once the new "
						+ "master's quarantine has passed",
				this.uri.redacted(), SentinelGroup.format(previous), SentinelGroup.format(address), how);
		try {
			this.moved.run();
		}
		catch (Throwable ex) {
			logger.warn("Redlock voter {}: closing the connections to the former master failed", this.uri.redacted(),
					ex);
		}
		return moved;
	}

	/**
	 * Forgets the master known, if it is still the given generation's: the next
	 * connection asks the sentinels again.
	 */
	private synchronized void forget(int generation) {
		Current known = this.current;
		if (known != null && known.generation() == generation) {
			this.current = null;
		}
	}

	private void answeredFirst(HostAndPort sentinel) {
		List<HostAndPort> order = this.sentinels;
		if (!order.isEmpty() && order.get(0).equals(sentinel)) {
			return;
		}
		List<HostAndPort> reordered = new ArrayList<>(order.size());
		reordered.add(sentinel);
		order.stream().filter((s) -> !s.equals(sentinel)).forEach(reordered::add);
		this.sentinels = List.copyOf(reordered);
	}

	private @Nullable HostAndPort askSentinel(HostAndPort sentinel, String masterName, int timeoutMillis) {
		PipelinedConnection connection = new PipelinedConnection(sentinel,
				this.uri.sentinelClientConfig(timeoutMillis, this.clientName, this.tls));
		try {
			connection.send(new CommandArguments(Command.SENTINEL).add("GET-MASTER-ADDR-BY-NAME").add(masterName));
			connection.flushNow();
			Object reply = connection.readReply();
			if (reply instanceof List<?> parts && parts.size() == 2 && parts.get(0) instanceof byte[] host
					&& parts.get(1) instanceof byte[] port) {
				return new HostAndPort(new String(host, StandardCharsets.UTF_8),
						Integer.parseInt(new String(port, StandardCharsets.US_ASCII)));
			}
			return null;
		}
		finally {
			connection.closeQuietly();
		}
	}

	private boolean isMaster(HostAndPort address, int timeoutMillis) {
		try {
			PipelinedConnection connection;
			try {
				connection = new PipelinedConnection(address,
						this.uri.clientConfig(timeoutMillis, this.clientName, this.tls));
			}
			catch (JedisDataException ex) {
				throw new AuthenticationFailedException("authentication failed: " + ex.getMessage(), ex);
			}
			try {
				String role = role(connection);
				return role == null || role.equals("master");
			}
			finally {
				connection.closeQuietly();
			}
		}
		catch (AuthenticationFailedException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			logger.debug("Redlock voter {}: {} not checked: {}", this.uri.redacted(), SentinelGroup.format(address),
					ex.toString());
			return false;
		}
	}

	/** The server's role, or {@code null} when it refuses {@code ROLE}. */
	private static @Nullable String role(PipelinedConnection connection) {
		connection.send(new CommandArguments(Command.ROLE));
		connection.flushNow();
		try {
			Object reply = connection.readReply();
			if (reply instanceof List<?> parts && !parts.isEmpty() && parts.get(0) instanceof byte[] role) {
				return Arrays.equals(role, MASTER) ? "master" : new String(role, StandardCharsets.UTF_8);
			}
			return null;
		}
		catch (JedisDataException ex) {
			return null;
		}
	}

}
