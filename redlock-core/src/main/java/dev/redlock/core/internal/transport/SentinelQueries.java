package dev.redlock.core.internal.transport;

import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.exceptions.JedisConnectionException;

/**
 * Asks a Sentinel voter's sentinels where its master is
 * ({@code SENTINEL GET-MASTER-ADDR-BY-NAME}) over one kept connection per sentinel: the
 * voter asks every sentinel each second, which would otherwise cost a connection (and,
 * with TLS, a handshake) per sentinel per second. A kept connection is used by one caller
 * at a time: a caller that finds none opens one, and keeps it afterwards unless another
 * was kept meanwhile. A kept connection that broke while idle (a sentinel restarted, or
 * closed it as idle) is replaced at once and asked again, so it costs no answer.
 */
final class SentinelQueries implements AutoCloseable {

	private final Map<HostAndPort, PipelinedConnection> idle = new ConcurrentHashMap<>();

	private volatile boolean closed;

	/**
	 * Asks a sentinel for the address of the master of a name.
	 * @param sentinel the sentinel
	 * @param masterName the master's name
	 * @param config how to connect, when a connection must be opened
	 * @return the address, or {@code null} when the sentinel knows no master of that name
	 * @throws redis.clients.jedis.exceptions.JedisException when the sentinel cannot be
	 * asked, or refuses
	 */
	@Nullable HostAndPort masterAddress(HostAndPort sentinel, String masterName, Supplier<DefaultJedisClientConfig> config) {
		CommandArguments ask = new CommandArguments(Command.SENTINEL).add("GET-MASTER-ADDR-BY-NAME").add(masterName);
		PipelinedConnection kept = this.idle.remove(sentinel);
		if (kept != null) {
			try {
				return done(sentinel, kept, ask(kept, ask));
			}
			catch (JedisConnectionException ex) {
				kept.abort();
				if (ex.getCause() instanceof SocketTimeoutException) {
					// the sentinel is slow, not the connection broken: asked once is
					// enough
					throw ex;
				}
				// broken while it was idle: a new connection is asked below
			}
			catch (RuntimeException ex) {
				kept.abort();
				throw ex;
			}
		}
		PipelinedConnection opened = new PipelinedConnection(sentinel, config.get());
		try {
			return done(sentinel, opened, ask(opened, ask));
		}
		catch (RuntimeException ex) {
			opened.abort();
			throw ex;
		}
	}

	private static @Nullable HostAndPort ask(PipelinedConnection connection, CommandArguments ask) {
		connection.send(ask);
		connection.flushNow();
		Object reply = connection.readReply();
		if (reply instanceof List<?> parts && parts.size() == 2 && parts.get(0) instanceof byte[] host
				&& parts.get(1) instanceof byte[] port) {
			return new HostAndPort(new String(host, StandardCharsets.UTF_8),
					Integer.parseInt(new String(port, StandardCharsets.US_ASCII)));
		}
		return null;
	}

	/** Keeps a connection that answered, unless another is kept already or all closed. */
	private @Nullable HostAndPort done(HostAndPort sentinel, PipelinedConnection connection,
			@Nullable HostAndPort answer) {
		if (this.closed || this.idle.putIfAbsent(sentinel, connection) != null) {
			connection.closeQuietly();
		}
		else if (this.closed && this.idle.remove(sentinel, connection)) {
			// close() emptied the map between the check and the put
			connection.closeQuietly();
		}
		return answer;
	}

	/**
	 * Closes the kept connections, so that the next questions open new ones: when they
	 * are to be asked with other credentials.
	 */
	void forgetConnections() {
		for (HostAndPort sentinel : List.copyOf(this.idle.keySet())) {
			PipelinedConnection kept = this.idle.remove(sentinel);
			if (kept != null) {
				kept.closeQuietly();
			}
		}
	}

	/** Closes the kept connections; a question asked after it keeps none. */
	@Override
	public void close() {
		this.closed = true;
		forgetConnections();
	}

}
