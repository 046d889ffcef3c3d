package dev.redlock.core.internal.transport;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The idle connections of a {@link NodeConnectionPool}, the most recently used first (its
 * socket is the likeliest to be alive), at most {@code maxIdle}. Beyond the
 * {@code minIdle} kept warm, the least recently used one is let go once it has been
 * unused for the idle timeout, so that connections follow the work.
 */
final class IdleConnections {

	/** Guarded by itself. */
	private final ArrayDeque<PipelinedConnection> connections = new ArrayDeque<>();

	private final int maxIdle;

	private final int minIdle;

	private final long idleTimeoutNanos;

	IdleConnections(int maxIdle, int minIdle, long idleTimeoutNanos) {
		this.maxIdle = maxIdle;
		this.minIdle = minIdle;
		this.idleTimeoutNanos = idleTimeoutNanos;
	}

	/**
	 * Keeps a connection, the most recently used now, if there is room; then lets go of
	 * the least recently used one if more than {@code minIdle} are kept and it has been
	 * unused for the idle timeout. One pass under the lock, as a connection is given back
	 * after every command.
	 * @param now {@link System#nanoTime()}, from when it is idle
	 * @return the connection the caller closes: this one when there is no room, one let
	 * go, or {@code null}
	 */
	@Nullable PipelinedConnection offer(PipelinedConnection connection, long now) {
		synchronized (this.connections) {
			if (this.connections.size() >= this.maxIdle) {
				return connection;
			}
			connection.idleSince = now;
			this.connections.offerFirst(connection);
			PipelinedConnection oldest = this.connections.peekLast();
			if (this.connections.size() > this.minIdle && now - oldest.idleSince > this.idleTimeoutNanos) {
				return this.connections.pollLast();
			}
			return null;
		}
	}

	/** Takes the most recently used connection, or {@code null} when none is idle. */
	@Nullable PipelinedConnection pollMostRecent() {
		synchronized (this.connections) {
			return this.connections.pollFirst();
		}
	}

	/** Takes every connection out. */
	List<PipelinedConnection> drain() {
		synchronized (this.connections) {
			List<PipelinedConnection> drained = new ArrayList<>(this.connections);
			this.connections.clear();
			return drained;
		}
	}

	int size() {
		synchronized (this.connections) {
			return this.connections.size();
		}
	}

}
