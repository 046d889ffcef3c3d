package dev.redlock.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * A {@code redis-server} run as a child process of this JVM (backends {@code path} and
 * {@code embedded}).
 */
final class ProcessRedisNode implements ManagedNode {

	static final String LOOPBACK = "127.0.0.1";

	private static final Duration READY_TIMEOUT = Duration.ofSeconds(10);

	private static final Duration PROBE_TIMEOUT = Duration.ofMillis(250);

	private static final long POLL_MILLIS = 15;

	private static final Duration STOP_GRACE = Duration.ofSeconds(2);

	private static final int PORT_ATTEMPTS = 5;

	/** The server's dump file, in its directory: see {@link #deleteDumpFile()}. */
	private static final String DUMP_FILE = "dump.rdb";

	/** Thrown when the server could not bind its port (taken by someone else). */
	static final class PortInUseException extends IllegalStateException {

		private static final long serialVersionUID = 1L;

		PortInUseException(String message) {
			super(message);
		}

	}

	private final Path executable;

	private final Path dir;

	private final int port;

	private final @Nullable TestCertificates tls;

	private final int tlsPort;

	private @Nullable Process process;

	private boolean paused;

	private boolean stopped;

	/** The wall clock the server sees, when it can be stepped; else the real one. */
	private final @Nullable FakeClock clock;

	/** Further {@code redis-server} arguments, given at every start. */
	private final List<String> arguments;

	/**
	 * The configuration file, first on the command line, or {@code null}: a sentinel
	 * needs one (it writes what it learns there).
	 */
	private @Nullable Path configFile;

	private ProcessRedisNode(Path executable, Path dir, int port, @Nullable TestCertificates tls, int tlsPort,
			boolean steppableClock, List<String> arguments) {
		this.executable = executable;
		this.dir = dir;
		this.port = port;
		this.tls = tls;
		this.tlsPort = tlsPort;
		this.clock = steppableClock ? FakeClock.in(dir) : null;
		this.arguments = List.copyOf(arguments);
	}

	/**
	 * Starts a server on a free loopback port, trying another port when the chosen one is
	 * taken meanwhile.
	 */
	static ProcessRedisNode start(Path executable) {
		return start(executable, null);
	}

	/**
	 * Starts a server on a free loopback port; with certificates, it also serves TLS on a
	 * second free port.
	 */
	static ProcessRedisNode start(Path executable, @Nullable TestCertificates tls) {
		return start(executable, tls, false);
	}

	/**
	 * Starts a server on a free loopback port; with certificates, it also serves TLS on a
	 * second free port; with a steppable clock, it runs under libfaketime.
	 */
	static ProcessRedisNode start(Path executable, @Nullable TestCertificates tls, boolean steppableClock) {
		return start(executable, tls, steppableClock, List.of());
	}

	/**
	 * Starts a server on a free loopback port, as
	 * {@link #start(Path, TestCertificates, boolean)} does, with further
	 * {@code redis-server} arguments, e.g. {@code --enable-debug-command yes}.
	 */
	static ProcessRedisNode start(Path executable, @Nullable TestCertificates tls, boolean steppableClock,
			List<String> arguments) {
		return startOnFreePort("redis-server", () -> new ProcessRedisNode(executable, createDir(), freePort(), tls,
				(tls != null) ? freePort() : -1, steppableClock, arguments));
	}

	/**
	 * Starts a sentinel on a free loopback port that monitors one master, with the given
	 * {@code sentinel} directives for it (e.g. {@code down-after-milliseconds 1000}).
	 * @param masterName the name the master is monitored under
	 * @param masterPort the master's loopback port
	 * @param quorum how many sentinels must agree the master is down
	 * @param directives further {@code sentinel <directive> <masterName> <value>} lines,
	 * each given as {@code <directive> <value>}
	 */
	static ProcessRedisNode startSentinel(Path executable, String masterName, int masterPort, int quorum,
			List<String> directives) {
		return startSentinel(executable, null, masterName, masterPort, quorum, directives);
	}

	/**
	 * Starts a sentinel as {@link #startSentinel(Path, String, int, int, List)} does;
	 * with certificates, it also serves TLS on a second free port, and speaks TLS to the
	 * servers it watches and to the other sentinels ({@code tls-replication yes}), to
	 * which it announces its TLS port.
	 */
	static ProcessRedisNode startSentinel(Path executable, @Nullable TestCertificates tls, String masterName,
			int masterPort, int quorum, List<String> directives) {
		StringBuilder config = new StringBuilder();
		config.append("sentinel monitor ")
			.append(masterName)
			.append(' ')
			.append(LOOPBACK)
			.append(' ')
			.append(masterPort)
			.append(' ')
			.append(quorum)
			.append('\n');
		for (String directive : directives) {
			int space = directive.indexOf(' ');
			config.append("sentinel ")
				.append(directive, 0, space)
				.append(' ')
				.append(masterName)
				.append(directive.substring(space))
				.append('\n');
		}
		return startOnFreePort("a sentinel", () -> {
			ProcessRedisNode node = new ProcessRedisNode(executable, createDir(), freePort(), tls,
					(tls != null) ? freePort() : -1, false,
					(tls != null) ? List.of("--sentinel", "--tls-replication", "yes") : List.of("--sentinel"));
			node.configFile = node.dir.resolve("sentinel.conf");
			try {
				Files.writeString(node.configFile, config.toString());
			}
			catch (IOException e) {
				ProcessRedisNode.deleteRecursively(node.dir);
				throw new UncheckedIOException("could not write a sentinel's configuration", e);
			}
			return node;
		});
	}

	/**
	 * Launches a node made for a free port, trying another one when that port is taken
	 * meanwhile; a node that fails to start is stopped.
	 */
	private static ProcessRedisNode startOnFreePort(String what, Supplier<ProcessRedisNode> newNode) {
		PortInUseException last = null;
		for (int attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
			ProcessRedisNode node = newNode.get();
			Cleanup.track(node);
			try {
				node.launch();
				return node;
			}
			catch (PortInUseException e) {
				node.stop();
				last = e;
			}
			catch (RuntimeException | Error e) {
				node.stop();
				throw e;
			}
		}
		throw new IllegalStateException(
				"could not find a free port for " + what + " after " + PORT_ATTEMPTS + " attempts", last);
	}

	@Override
	public void stepClock(Duration forward) {
		if (clock == null) {
			ManagedNode.super.stepClock(forward);
			return;
		}
		clock.step(forward);
	}

	@Override
	public String host() {
		return LOOPBACK;
	}

	@Override
	public synchronized int port() {
		return port;
	}

	@Override
	public int tlsPort() {
		if (tls == null) {
			throw new IllegalStateException("node " + uri() + " was not started with TLS (RedisNodes.startTls)");
		}
		return tlsPort;
	}

	/**
	 * The process id of the current (or last) server process.
	 * @return the pid, or -1 if no process was started
	 */
	synchronized long pid() {
		Process p = process;
		return p == null ? -1 : p.pid();
	}

	@Override
	public synchronized boolean isRunning() {
		Process p = process;
		return p != null && p.isAlive();
	}

	@Override
	public synchronized boolean isPaused() {
		return paused && isRunning();
	}

	@Override
	public synchronized void kill() {
		Process p = process;
		paused = false;
		if (p == null || !p.isAlive()) {
			return;
		}
		p.destroyForcibly(); // SIGKILL on Linux and macOS; also ends a stopped process
		if (!ChildProcesses.waitFor(p, Duration.ofSeconds(10))) {
			throw new IllegalStateException("redis-server pid " + p.pid() + " did not die after SIGKILL");
		}
	}

	@Override
	public synchronized void pause() {
		Process p = requireRunning();
		ChildProcesses.signal(p, "STOP");
		paused = true;
		ChildProcesses.awaitProcState(p.pid(), 'T');
	}

	@Override
	public synchronized void resume() {
		Process p = process;
		if (!paused || p == null) {
			return;
		}
		if (p.isAlive()) {
			ChildProcesses.signal(p, "CONT");
		}
		paused = false;
	}

	@Override
	public synchronized void restart() {
		if (stopped) {
			throw new IllegalStateException("node " + uri() + " was stopped by close()");
		}
		kill();
		deleteDumpFile();
		PortInUseException last = null;
		for (int attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
			try {
				launch();
				return;
			}
			catch (PortInUseException e) {
				last = e;
				ChildProcesses.sleep(Duration.ofMillis(100L * (attempt + 1)));
			}
		}
		throw new IllegalStateException("could not restart redis-server on port " + port, last);
	}

	@Override
	public void stop() {
		Process p;
		synchronized (this) {
			if (stopped) {
				return;
			}
			stopped = true;
			p = process;
		}
		try {
			if (p != null && p.isAlive()) {
				if (paused) {
					try {
						ChildProcesses.signal(p, "CONT"); // a stopped process ignores
															// SIGTERM until
						// continued
					}
					catch (RuntimeException ignored) {
						// fall through to SIGTERM / SIGKILL
					}
				}
				p.destroy();
				if (!ChildProcesses.waitFor(p, STOP_GRACE)) {
					p.destroyForcibly();
					ChildProcesses.waitFor(p, STOP_GRACE);
				}
			}
		}
		catch (Throwable ignored) {
			// never throws
		}
		finally {
			synchronized (this) {
				paused = false;
			}
			deleteRecursively(dir);
			Cleanup.untrack(this);
		}
	}

	@Override
	public String toString() {
		return "redis-server " + uri() + " (pid " + pid() + ", " + executable + ")";
	}

	// ---------------------------------------------------------------------------------------------------------------

	/**
	 * Deletes what the server last wrote to its dump file, which it would load at its
	 * next start: a {@link #saveSnapshot()}, or the dump Redis 6.2 writes to feed a new
	 * replica ({@code repl-diskless-sync no}). A restarted node starts empty.
	 */
	private void deleteDumpFile() {
		try {
			Files.deleteIfExists(dir.resolve(DUMP_FILE));
		}
		catch (IOException ex) {
			throw new UncheckedIOException("could not delete the dump file of " + uri() + " before its restart", ex);
		}
	}

	private void launch() {
		Path log = dir.resolve("redis.log");
		List<String> cmd = new ArrayList<>(List.of(executable.toString()));
		if (configFile != null) {
			cmd.add(configFile.toString());
		}
		cmd.addAll(List.of("--port", Integer.toString(port), "--bind", LOOPBACK, "--save", "", "--appendonly", "no",
				"--dir", dir.toString(), "--dbfilename", DUMP_FILE));
		if (tls != null) {
			// the plain port stays open for the kit's own commands; clients under test
			// use the TLS port
			cmd.addAll(List.of("--tls-port", Integer.toString(tlsPort), "--tls-cert-file",
					tls.serverCertificate().toString(), "--tls-key-file", tls.serverKey().toString(),
					"--tls-ca-cert-file", tls.caCertificate().toString(), "--tls-auth-clients", "no"));
		}
		cmd.addAll(this.arguments);
		Process p;
		try {
			ProcessBuilder builder = new ProcessBuilder(cmd).directory(dir.toFile())
				.redirectErrorStream(true)
				.redirectOutput(log.toFile());
			if (clock != null) {
				builder.environment().putAll(clock.environment());
			}
			p = builder.start();
			p.getOutputStream().close();
		}
		catch (IOException e) {
			throw new UncheckedIOException("could not start " + executable, e);
		}
		synchronized (this) {
			process = p;
			paused = false;
		}
		awaitReady(p, log);
	}

	private void awaitReady(Process p, Path log) {
		long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
		while (true) {
			if (!p.isAlive()) {
				String tail = tail(log);
				String message = "redis-server on port " + port + " exited with code " + p.exitValue() + "; log " + log
						+ ":\n" + tail;
				if (tail.contains("Address already in use")) {
					throw new PortInUseException(message);
				}
				throw new IllegalStateException(message);
			}
			try {
				Object pong = Resp.call(LOOPBACK, port, PROBE_TIMEOUT, "PING");
				if ("PONG".equals(pong)) {
					if (answeredByOurProcess(p)) {
						return;
					}
					p.destroyForcibly();
					ChildProcesses.waitFor(p, STOP_GRACE);
					throw new PortInUseException("port " + port + " is served by another Redis process");
				}
			}
			catch (UncheckedIOException notYet) {
				// not listening yet
			}
			if (System.nanoTime() - deadline > 0) {
				p.destroyForcibly();
				ChildProcesses.waitFor(p, STOP_GRACE);
				throw new IllegalStateException("redis-server on port " + port + " did not answer PING within "
						+ READY_TIMEOUT.toSeconds() + " s; log " + log + ":\n" + tail(log));
			}
			ChildProcesses.sleep(Duration.ofMillis(POLL_MILLIS));
		}
	}

	/**
	 * Makes sure the server that answered is ours and not a stranger on a reused port.
	 */
	private boolean answeredByOurProcess(Process p) {
		Object info = Resp.call(LOOPBACK, port, PROBE_TIMEOUT, "INFO", "server");
		if (!(info instanceof String text)) {
			return true; // cannot tell: trust it
		}
		for (String line : text.split("\r?\n")) {
			if (line.startsWith("process_id:")) {
				return line.substring("process_id:".length()).trim().equals(Long.toString(p.pid()));
			}
		}
		return true;
	}

	private Process requireRunning() {
		Process p = process;
		if (p == null || !p.isAlive()) {
			throw new IllegalStateException("node " + uri() + " is not running");
		}
		return p;
	}

	/**
	 * The major version of a {@code redis-server} binary, from its {@code --version}
	 * ({@code Redis server v=7.0.15 ...}).
	 * @throws IllegalStateException if it cannot be run or its version read
	 */
	static int majorVersion(Path executable) {
		try {
			Process p = new ProcessBuilder(executable.toString(), "--version").redirectErrorStream(true).start();
			p.getOutputStream().close();
			String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			if (!ChildProcesses.waitFor(p, Duration.ofSeconds(10))) {
				p.destroyForcibly();
				throw new IllegalStateException(executable + " --version did not finish");
			}
			int at = output.indexOf("v=");
			int dot = output.indexOf('.', at);
			if (at < 0 || dot < 0) {
				throw new IllegalStateException("no version in the output of " + executable + " --version: " + output);
			}
			return Integer.parseInt(output.substring(at + 2, dot));
		}
		catch (IOException e) {
			throw new UncheckedIOException("could not run " + executable + " --version", e);
		}
		catch (NumberFormatException e) {
			throw new IllegalStateException("no version in the output of " + executable + " --version", e);
		}
	}

	static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK))) {
			return socket.getLocalPort();
		}
		catch (IOException e) {
			throw new UncheckedIOException("could not find a free loopback port", e);
		}
	}

	private static Path createDir() {
		try {
			return Files.createTempDirectory("redlock-test-redis-");
		}
		catch (IOException e) {
			throw new UncheckedIOException("could not create a temp directory for redis-server", e);
		}
	}

	static String tail(Path log) {
		try {
			String[] lines = new String(Files.readAllBytes(log), StandardCharsets.UTF_8).split("\r?\n");
			List<String> last = new ArrayList<>(List.of(lines).subList(Math.max(0, lines.length - 30), lines.length));
			return String.join("\n", last);
		}
		catch (IOException | UncheckedIOException e) {
			return "(log unreadable: " + e + ")";
		}
	}

	static void deleteRecursively(Path root) {
		if (!Files.exists(root)) {
			return;
		}
		try (Stream<Path> paths = Files.walk(root)) {
			paths.sorted(Comparator.reverseOrder()).forEach(path -> {
				try {
					Files.deleteIfExists(path);
				}
				catch (IOException ignored) {
					// best effort
				}
			});
		}
		catch (IOException | UncheckedIOException ignored) {
			// best effort
		}
	}

}
