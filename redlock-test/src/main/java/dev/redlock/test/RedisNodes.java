package dev.redlock.test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

/**
 * N independent Redis servers on loopback with persistence off, for tests.
 *
 * <pre>{@code
 * try (RedisNodes redis = RedisNodes.start(3)) {
 *     redis.node(0).kill();
 *     redis.node(1).pause();
 *     ...
 *     redis.reset(); // all running, unpaused and empty again
 * }
 * }</pre>
 *
 * <p>
 * The backend is chosen in this order, unless the system property
 * {@value #BACKEND_PROPERTY} names one: {@code testcontainers} (Testcontainers on the
 * class path and a Docker engine answering; image {@code redis:7-alpine}), {@code path}
 * (a {@code redis-server} on {@code PATH}), {@code embedded} (the binary bundled in
 * {@code com.github.codemonstur:embedded-redis}). Every server the kit starts is stopped
 * by {@link #close()} and, failing that, by a JVM shutdown hook. With the
 * {@code testcontainers} backend a restarted node may get a different port: read
 * {@link #uris()} again after {@link #reset()} or {@link RedisNode#restart()}.
 */
public final class RedisNodes implements AutoCloseable {

	/**
	 * System property that forces a backend: {@code testcontainers}, {@code path} or
	 * {@code embedded}.
	 */
	public static final String BACKEND_PROPERTY = "redlock.test.backend";

	/** The key where Redlock keeps a node's marker, which a reset keeps. */
	static final String REDLOCK_MARKER = "{fence}";

	/**
	 * Deletes every key of every database but the one named ARGV[1] in database 0, a
	 * thousand keys a page. Its first write is refused by a replica, whatever it holds,
	 * so that a node left as one is restarted.
	 */
	private static final String DELETE_ALL_BUT_THE_MARKER = """
			redis.call('DEL', ARGV[1] .. ':reset')
			for db = 0, 15 do
			  if not pcall(redis.call, 'SELECT', db) then break end
			  local cursor = '0'
			  repeat
			    local page = redis.call('SCAN', cursor, 'COUNT', 1000)
			    cursor = page[1]
			    for _, key in ipairs(page[2]) do
			      if db ~= 0 or key ~= ARGV[1] then redis.call('DEL', key) end
			    end
			  until cursor == '0'
			end
			return 0
			""";

	private static final AtomicInteger THREADS = new AtomicInteger();

	private final String backend;

	private final List<ManagedNode> nodes;

	private final AtomicBoolean closed = new AtomicBoolean();

	private RedisNodes(String backend, List<ManagedNode> nodes) {
		this.backend = backend;
		this.nodes = List.copyOf(nodes);
	}

	/**
	 * Starts {@code count} empty Redis servers in parallel and waits until each answers
	 * {@code PING}.
	 * @param count how many servers, at least 1
	 * @return the running servers; close them when done
	 * @throws IllegalArgumentException if {@code count < 1}
	 * @throws IllegalStateException if no backend is available (the message says how to
	 * get Redis) or a server does not start (the message includes the tail of its log)
	 */
	public static RedisNodes start(int count) {
		return start(count, null);
	}

	/**
	 * Starts {@code count} in-process stand-ins for Redis servers, whatever
	 * {@value #BACKEND_PROPERTY} says: loopback ports served by threads of this JVM that
	 * answer the commands a {@code Redlock} sends, with nothing to install (see the test
	 * kit's documentation for what they do not do: persistence, ACL, TLS, {@code DEBUG},
	 * replication, native {@code DELEX}/{@code DELIFEQ}). Killing or restarting one loses
	 * its data, as a server without persistence does.
	 * @param count how many stand-ins, at least 1
	 * @return the running stand-ins; close them when done
	 */
	public static RedisNodes startInProcess(int count) {
		return start(count, null, new Backends.Choice(Backends.IN_PROCESS, null, null), List.of());
	}

	/**
	 * Starts {@code count} empty Redis servers that also serve TLS, with a certificate
	 * for {@code localhost} and {@code 127.0.0.1} signed by
	 * {@link TestCertificates#caCertificate()}. Each node's {@link RedisNode#tlsUri()} is
	 * its {@code rediss://} address; {@link RedisNode#uri()} and
	 * {@link RedisNode#command} keep using its plain port. Needs the {@code path} or
	 * {@code embedded} backend.
	 * @param count how many servers, at least 1
	 * @return the running servers; close them when done
	 */
	public static RedisNodes startTls(int count) {
		return start(count, TestCertificates.get());
	}

	/**
	 * Starts {@code count} empty Redis servers whose wall clocks can be stepped
	 * ({@link RedisNode#stepClock(Duration)}): each runs the embedded Redis 6.2 binary
	 * under libfaketime, which needs Debian's {@code faketime} package (or the library
	 * named by the system property {@value FakeClock#LIBRARY_PROPERTY}).
	 * @param count how many servers, at least 1
	 * @return the running servers; close them when done
	 * @throws IllegalStateException if libfaketime or the embedded binary is missing
	 */
	public static RedisNodes startWithSteppableClocks(int count) {
		FakeClock.library();
		String resource = Backends.embeddedResource(System.getProperty("os.name", ""),
				System.getProperty("os.arch", ""));
		if (resource == null) {
			throw new IllegalStateException("Steppable clocks need the embedded-redis binary for this platform");
		}
		return start(count, null, new Backends.Choice(Backends.STEPPABLE_CLOCK, null, resource), List.of());
	}

	/**
	 * Starts {@code count} empty Redis servers that accept {@code DEBUG}, e.g. for
	 * {@link RedisNode#reloadSnapshot()}: Redis 7 refuses it unless started with
	 * {@code enable-debug-command}, an option Redis 6.2 does not know, so the kit passes
	 * it to servers from 7 on only. The backend is chosen as for {@link #start(int)}.
	 * @param count how many servers, at least 1
	 * @return the running servers; close them when done
	 */
	public static RedisNodes startWithDebugCommand(int count) {
		Backends.Choice choice = Backends.select();
		return start(count, null, choice, Backends.debugCommandArguments(choice));
	}

	private static RedisNodes start(int count, @Nullable TestCertificates tls) {
		return start(count, tls, Backends.select(), List.of());
	}

	/**
	 * Starts one empty server per binary given, in that order, e.g. a quorum of different
	 * servers: {@link #embeddedServer()}, {@link #preparedServer(String)}, a
	 * {@code redis-server} on PATH.
	 * @param executables the {@code redis-server} binaries (or scripts starting one)
	 * @return the running servers; close them when done
	 */
	public static RedisNodes startServers(List<Path> executables) {
		List<Backends.Choice> choices = new ArrayList<>(executables.size());
		for (Path executable : executables) {
			choices.add(new Backends.Choice(Backends.PATH, executable, null));
		}
		return start(choices, null, List.of(), "mixed");
	}

	/**
	 * The embedded-redis binary (Redis 6.2) for this platform, extracted from the class
	 * path.
	 * @throws IllegalStateException if there is none for this platform
	 */
	public static Path embeddedServer() {
		String resource = Backends.embeddedResource(System.getProperty("os.name", ""),
				System.getProperty("os.arch", ""));
		if (resource == null) {
			throw new IllegalStateException("no embedded-redis binary for this platform on the class path");
		}
		return Backends.extractEmbedded(resource);
	}

	/**
	 * The {@code redis-server} first on PATH, as the {@code path} backend would run it.
	 * @return its path, or {@code null} when there is none
	 */
	public static @Nullable Path serverOnPath() {
		return Backends.findOnPath(System.getenv("PATH"));
	}

	/**
	 * A server prepared by {@code redlock-test/servers.sh}: {@code valkey-8.0},
	 * {@code valkey-9.1} or {@code redis-8.6}, in the directory named by
	 * {@value #SERVERS_PROPERTY}, else {@code REDLOCK_SERVERS_DIR}, else
	 * {@code ~/.cache/redlock-servers} (where the script puts them).
	 * @param name the server's name in the script
	 * @return its {@code redis-server}
	 * @throws IllegalStateException if it was not prepared; the message says how to
	 */
	public static Path preparedServer(String name) {
		String configured = System.getProperty(SERVERS_PROPERTY, System.getenv("REDLOCK_SERVERS_DIR"));
		Path dir = (configured != null && !configured.isBlank()) ? Path.of(configured)
				: Path.of(System.getProperty("user.home"), ".cache", "redlock-servers");
		Path server = dir.resolve(name).resolve("bin").resolve("redis-server");
		if (!Files.isExecutable(server)) {
			throw new IllegalStateException("no " + name + " server at " + server + ": run redlock-test/servers.sh "
					+ name + " (it fetches Debian's package into that directory)");
		}
		return server;
	}

	/**
	 * System property naming the directory of the servers {@code redlock-test/servers.sh}
	 * prepared.
	 */
	public static final String SERVERS_PROPERTY = "redlock.test.servers";

	private static RedisNodes start(int count, @Nullable TestCertificates tls, Backends.Choice choice,
			List<String> arguments) {
		if (count < 1) {
			throw new IllegalArgumentException("count must be at least 1, was " + count);
		}
		return start(Collections.nCopies(count, choice), tls, arguments, choice.name());
	}

	private static RedisNodes start(List<Backends.Choice> choices, @Nullable TestCertificates tls,
			List<String> arguments, String backend) {
		int count = choices.size();
		if (count < 1) {
			throw new IllegalArgumentException("at least one server, was none");
		}
		ExecutorService pool = Executors.newFixedThreadPool(count, task -> {
			Thread thread = new Thread(task, "redlock-test-redis-start-" + THREADS.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		});
		List<Future<ManagedNode>> futures = new ArrayList<>(count);
		List<ManagedNode> started = new ArrayList<>(count);
		@Nullable Throwable failure = null;
		try {
			for (int i = 0; i < count; i++) {
				Backends.Choice choice = choices.get(i);
				futures.add(pool.submit(() -> Backends.startNode(choice, tls, arguments)));
			}
			for (Future<ManagedNode> future : futures) {
				try {
					started.add(future.get());
				}
				catch (ExecutionException e) {
					failure = addFailure(failure, e.getCause() == null ? e : e.getCause());
				}
				catch (InterruptedException e) {
					Thread.currentThread().interrupt();
					failure = addFailure(failure, e);
					futures.forEach(f -> f.cancel(true));
					break;
				}
			}
		}
		finally {
			pool.shutdown();
		}
		if (failure != null) {
			started.forEach(ManagedNode::stop);
			if (failure instanceof RuntimeException runtime) {
				throw runtime;
			}
			if (failure instanceof Error error) {
				throw error;
			}
			throw new IllegalStateException("could not start " + count + " Redis servers", failure);
		}
		return new RedisNodes(backend, started);
	}

	private static Throwable addFailure(@Nullable Throwable first, Throwable next) {
		if (first == null) {
			return next;
		}
		if (first != next) {
			first.addSuppressed(next);
		}
		return first;
	}

	/**
	 * The number of nodes.
	 * @return the count passed to {@link #start(int)}
	 */
	public int size() {
		return nodes.size();
	}

	/**
	 * One node.
	 * @param index 0-based
	 * @return the node at that index
	 * @throws IndexOutOfBoundsException for a bad index
	 */
	public RedisNode node(int index) {
		return nodes.get(index);
	}

	/**
	 * All nodes, in order.
	 * @return an unmodifiable list
	 */
	public List<RedisNode> nodes() {
		return List.copyOf(nodes);
	}

	/**
	 * Some of the nodes, e.g. a majority to fail at once:
	 * {@code redis.nodes(0, 2, 4).forEach(RedisNode::kill)}.
	 * @param indexes 0-based, in the order wanted
	 * @return an unmodifiable list of the nodes at those indexes
	 * @throws IndexOutOfBoundsException for a bad index
	 */
	public List<RedisNode> nodes(int... indexes) {
		return Arrays.stream(indexes).mapToObj(this::node).toList();
	}

	/**
	 * The current URI of each node, in order, e.g. for {@code redlock.nodes}.
	 * @return {@code "redis://127.0.0.1:PORT"} per node
	 */
	public List<String> uris() {
		List<String> uris = new ArrayList<>(nodes.size());
		for (RedisNode node : nodes) {
			uris.add(node.uri());
		}
		return List.copyOf(uris);
	}

	/**
	 * The backend the nodes run on.
	 * @return {@code "testcontainers"}, {@code "path"} or {@code "embedded"}
	 */
	public String backend() {
		return backend;
	}

	/**
	 * Restores every node for the next test: resumes paused nodes, restarts killed or
	 * stopped ones, then lifts any {@code CLIENT PAUSE} and deletes every key of every
	 * node but the node's Redlock marker (the key {@value #REDLOCK_MARKER}, which tells
	 * Redlock clients that the node lost no data), one by one: a {@code FLUSHALL} would
	 * show in the node's statistics as a loss of data since the marker was written. A
	 * node that refuses those commands (left with a password, or as a replica) is
	 * restarted: fresh and empty. Other settings a test changed stay.
	 * {@link WithRedisNodes} calls this before each test.
	 * @throws IllegalStateException if these nodes were closed, or a node cannot be
	 * brought back
	 */
	public void reset() {
		if (closed.get()) {
			throw new IllegalStateException("RedisNodes already closed");
		}
		for (ManagedNode node : nodes) {
			if (node.isPaused()) {
				node.resume();
			}
			if (!node.isRunning()) {
				node.restart();
			}
		}
		for (ManagedNode node : nodes) {
			try {
				node.unpauseClients();
				// every key but the node's Redlock marker, deleted one by one: a reset
				// between tests is no loss of data that the next test's clients should
				// wait
				// out in quarantine (a FLUSHALL would be, counted in the node's
				// statistics)
				node.command("EVAL", DELETE_ALL_BUT_THE_MARKER, "0", REDLOCK_MARKER);
			}
			catch (IllegalStateException refused) {
				// an error reply (NOAUTH, READONLY, ...): a fresh server has none of that
				node.restart();
			}
		}
	}

	/** Stops every node started by {@link #start(int)}. Idempotent; never throws. */
	@Override
	public void close() {
		if (!closed.compareAndSet(false, true)) {
			return;
		}
		for (ManagedNode node : nodes) {
			try {
				node.stop();
			}
			catch (Throwable ignored) {
				// never throws
			}
		}
	}

	@Override
	public String toString() {
		return "RedisNodes[" + backend + ", " + uris() + (closed.get() ? ", closed]" : "]");
	}

}
