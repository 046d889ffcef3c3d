package dev.redlock.test;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * One Redis server started by {@link RedisNodes}, with fault injection.
 *
 * <p>
 * For the {@code path} and {@code embedded} backends a node is a local
 * {@code redis-server} process and {@link #restart()} keeps its port. For the
 * {@code testcontainers} backend a node is a container; a restart starts a fresh
 * container whose mapped port may differ, so always read {@link #port()} / {@link #uri()}
 * again after {@link #restart()} or {@link RedisNodes#reset()}.
 */
public interface RedisNode {

	/**
	 * The timeout used by {@link #command(String...)} to connect and to wait for the
	 * reply: 2 seconds.
	 */
	Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(2);

	/**
	 * The host to connect to.
	 * @return {@code "127.0.0.1"} for local processes; the Docker host for containers
	 */
	String host();

	/**
	 * The current port.
	 * @return the TCP port the server listens on (for containers: the current mapped
	 * port)
	 */
	int port();

	/**
	 * The current address as a Redis URI.
	 * @return {@code "redis://" + host() + ":" + port()}
	 */
	default String uri() {
		return "redis://" + host() + ":" + port();
	}

	/**
	 * Returns the TLS port of a node started by {@link RedisNodes#startTls(int)}; its
	 * certificate is signed by {@link TestCertificates#caCertificate()}.
	 * @return the port serving TLS
	 * @throws IllegalStateException if the node was not started with TLS
	 */
	default int tlsPort() {
		throw new IllegalStateException("node " + uri() + " was not started with TLS (RedisNodes.startTls)");
	}

	/**
	 * Returns {@code rediss://127.0.0.1:TLS_PORT} for a node started by
	 * {@link RedisNodes#startTls(int)}.
	 * @return the TLS URI
	 * @throws IllegalStateException if the node was not started with TLS
	 */
	default String tlsUri() {
		return "rediss://" + host() + ":" + tlsPort();
	}

	/**
	 * Whether the server process (or container) is alive.
	 * @return {@code true} while alive, including while paused
	 */
	boolean isRunning();

	/**
	 * Whether the server is paused by {@link #pause()}.
	 * @return {@code true} between {@link #pause()} and {@link #resume()} (or a
	 * kill/restart)
	 */
	boolean isPaused();

	/**
	 * Kills the server abruptly (SIGKILL, or {@code docker kill}) and waits until it is
	 * gone. Afterwards connections are refused. Does nothing if the server is not
	 * running.
	 */
	void kill();

	/**
	 * Freezes the server (SIGSTOP, or {@code docker pause}): connections are still
	 * accepted by the kernel but no command is answered until {@link #resume()}.
	 * @throws IllegalStateException if the server is not running
	 */
	void pause();

	/**
	 * Unfreezes a server frozen by {@link #pause()} (SIGCONT, or {@code docker unpause}).
	 * Does nothing if not paused.
	 */
	void resume();

	/**
	 * Kills the server if it is running, then starts a fresh, empty one (no persistence)
	 * and waits until it answers {@code PING}. Local processes keep their port;
	 * containers may get a new mapped port.
	 */
	void restart();

	/**
	 * Pauses the server's clients for a while with {@code CLIENT PAUSE}: the process
	 * keeps running and accepting connections, but matching commands wait until the pause
	 * ends (and then run). The pause lifts by itself after {@code duration}, or earlier
	 * with {@link #unpauseClients()} or {@link RedisNodes#reset()}.
	 * @param duration how long the pause lasts, at least 1 ms
	 * @param writesOnly {@code true} for {@code CLIENT PAUSE ms WRITE} (Redis 6.2+):
	 * commands that may write, scripts included, wait while reads are served;
	 * {@code false} to hold every command
	 * @throws IllegalArgumentException if {@code duration} is below 1 ms
	 * @throws IllegalStateException with the error text when Redis refuses the command
	 */
	default void pauseClients(Duration duration, boolean writesOnly) {
		long millis = duration.toMillis();
		if (millis < 1) {
			throw new IllegalArgumentException("duration must be at least 1 ms, was " + duration);
		}
		if (writesOnly) {
			command("CLIENT", "PAUSE", Long.toString(millis), "WRITE");
		}
		else {
			command("CLIENT", "PAUSE", Long.toString(millis), "ALL");
		}
	}

	/**
	 * Ends a pause started by {@link #pauseClients(Duration, boolean)}
	 * ({@code CLIENT UNPAUSE}, Redis 6.2+); the commands that were held run now. Does
	 * nothing if no pause is active.
	 */
	default void unpauseClients() {
		command("CLIENT", "UNPAUSE");
	}

	/**
	 * Sends one command over a fresh connection with a 2 second timeout and returns the
	 * reply as text.
	 * @param args the command and its arguments, e.g. {@code "SET", "k", "v"}
	 * @return simple and bulk strings as-is, integers in decimal, {@code null} for nil,
	 * array elements joined with {@code "\n"} (nil elements rendered as {@code "null"})
	 * @throws IllegalStateException with the error text when Redis answers with an error
	 * @throws java.io.UncheckedIOException when the server refuses the connection or does
	 * not answer in time
	 */
	default @Nullable String command(String... args) {
		return command(DEFAULT_COMMAND_TIMEOUT, args);
	}

	/**
	 * Like {@link #command(String...)} with an explicit connect and read timeout, e.g. to
	 * see a paused node time out quickly.
	 * @param timeout the connect timeout and the time to wait for the reply
	 * @param args the command and its arguments
	 * @return the reply rendered as in {@link #command(String...)}
	 * @throws IllegalStateException with the error text when Redis answers with an error
	 * @throws java.io.UncheckedIOException when the server refuses the connection or does
	 * not answer in time
	 */
	default @Nullable String command(Duration timeout, String... args) {
		return Resp.render(Resp.call(host(), port(), timeout, args));
	}

	/**
	 * What the server counted per command since it started or since
	 * {@code CONFIG RESETSTAT} ({@code INFO commandstats}), commands it has not run left
	 * out; e.g. which commands a client's lock and release sent.
	 * @return each command's counts by its lower-case name ({@code evalsha},
	 * {@code config|resetstat})
	 */
	default Map<String, CommandStat> commandStats() {
		Map<String, CommandStat> stats = new HashMap<>();
		for (String line : String.valueOf(command("INFO", "commandstats")).split("\r?\n")) {
			if (line.startsWith("cmdstat_")) {
				CommandStat stat = new CommandStat(Long.parseLong(field(line, "calls=")),
						Double.parseDouble(field(line, "usec=")));
				if (stat.calls() > 0) {
					stats.put(line.substring("cmdstat_".length(), line.indexOf(':')), stat);
				}
			}
		}
		return stats;
	}

	private static String field(String line, String name) {
		int at = line.indexOf(name) + name.length();
		int end = line.indexOf(',', at);
		return line.substring(at, (end < 0) ? line.length() : end);
	}

	/**
	 * One command's counts in {@code INFO commandstats}.
	 *
	 * @param calls how many times it ran
	 * @param usec the server's time running it, in microseconds
	 */
	record CommandStat(long calls, double usec) {
	}

	/**
	 * Writes the server's data set to its dump file now ({@code SAVE}), for a later
	 * {@link #reloadSnapshot()}; the kit's servers save nothing by themselves.
	 * @throws IllegalStateException with the error text when Redis refuses the command
	 */
	default void saveSnapshot() {
		command("SAVE");
	}

	/**
	 * Replaces the server's data set with the one {@link #saveSnapshot()} last wrote,
	 * without restarting it ({@code DEBUG RELOAD NOSAVE}): keys written since are gone,
	 * keys deleted since are back, while its {@code run_id} and uptime stay. A stand-in
	 * for a server brought back from an old dump or a restored VM snapshot. Only for
	 * nodes that accept {@code DEBUG} ({@link RedisNodes#startWithDebugCommand(int)}, or
	 * Redis 6.2).
	 * @throws IllegalStateException with the error text when Redis refuses the command
	 */
	default void reloadSnapshot() {
		command("DEBUG", "RELOAD", "NOSAVE");
	}

	/**
	 * Steps the server's wall clock, as an NTP step, a manual {@code date} or a virtual
	 * machine resumed after a pause would: Redis expires keys by that clock, and its
	 * {@code TIME} reads it. Only for nodes started by
	 * {@link RedisNodes#startWithSteppableClocks(int)}.
	 * @param forward how far forward (backward when negative), to the millisecond
	 * @throws IllegalStateException if the node's clock cannot be stepped
	 */
	default void stepClock(Duration forward) {
		throw new IllegalStateException(
				"node " + uri() + " was not started with a steppable clock " + "(RedisNodes.startWithSteppableClocks)");
	}

}
