package dev.redlock.test;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Locale;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * Chooses where Redis comes from: Testcontainers, a {@code redis-server} on PATH, or the
 * embedded-redis binary.
 */
final class Backends {

	static final String TESTCONTAINERS = "testcontainers";
	static final String PATH = "path";
	static final String EMBEDDED = "embedded";

	/** The in-process stand-in: never chosen, only asked for by name. */
	static final String IN_PROCESS = "inprocess";

	/** The embedded binary under libfaketime: never chosen, only asked for by name. */
	static final String STEPPABLE_CLOCK = "embedded-steppable-clock";

	static final String HOW_TO_GET_REDIS = "install redis-server (e.g. apt-get install redis-server), "
			+ "or keep com.github.codemonstur:embedded-redis on the test classpath, or start a Docker engine, "
			+ "or run with -D" + RedisNodes.BACKEND_PROPERTY + "=" + IN_PROCESS + " for the in-process stand-in";

	private static final String DOCKER_FACTORY_CLASS = "org.testcontainers.DockerClientFactory";

	private static volatile @Nullable Boolean dockerAvailable;

	private static @Nullable Path extractedEmbedded;

	/**
	 * A chosen backend; {@code executable} is set for {@code path} and {@code embedded}.
	 */
	record Choice(String name, @Nullable Path executable, @Nullable String resource) {
	}

	private Backends() {
	}

	/**
	 * Chooses with the system property {@value RedisNodes#BACKEND_PROPERTY}, the real
	 * PATH and class path.
	 */
	static Choice select() {
		return select(System.getProperty(RedisNodes.BACKEND_PROPERTY), Backends::isDockerAvailable,
				() -> findOnPath(System.getenv("PATH")),
				() -> embeddedResource(System.getProperty("os.name", ""), System.getProperty("os.arch", "")));
	}

	/**
	 * The selection logic, with its inputs passed in so tests can vary them.
	 * @param forced the requested backend, or null/blank for the automatic order
	 * @throws IllegalStateException when the requested backend, or any backend, is not
	 * available
	 */
	static Choice select(@Nullable String forced, BooleanSupplier docker, Supplier<@Nullable Path> onPath,
			Supplier<@Nullable String> embedded) {
		String wanted = forced == null ? "" : forced.trim().toLowerCase(Locale.ROOT);
		switch (wanted) {
			case "": {
				if (docker.getAsBoolean()) {
					return new Choice(TESTCONTAINERS, null, null);
				}
				Path exe = onPath.get();
				if (exe != null) {
					return new Choice(PATH, exe, null);
				}
				String resource = embedded.get();
				if (resource != null) {
					return new Choice(EMBEDDED, null, resource);
				}
				throw new IllegalStateException("No Redis available for tests: " + HOW_TO_GET_REDIS);
			}
			case TESTCONTAINERS:
				if (!docker.getAsBoolean()) {
					throw new IllegalStateException(RedisNodes.BACKEND_PROPERTY + "=" + TESTCONTAINERS
							+ " but Testcontainers is not on the class path or no Docker engine answers; "
							+ HOW_TO_GET_REDIS);
				}
				return new Choice(TESTCONTAINERS, null, null);
			case PATH: {
				Path exe = onPath.get();
				if (exe == null) {
					throw new IllegalStateException(RedisNodes.BACKEND_PROPERTY + "=" + PATH
							+ " but there is no redis-server on PATH; " + HOW_TO_GET_REDIS);
				}
				return new Choice(PATH, exe, null);
			}
			case EMBEDDED: {
				String resource = embedded.get();
				if (resource == null) {
					throw new IllegalStateException(RedisNodes.BACKEND_PROPERTY + "=" + EMBEDDED
							+ " but no embedded-redis binary for this OS/architecture is on the class path; "
							+ HOW_TO_GET_REDIS);
				}
				return new Choice(EMBEDDED, null, resource);
			}
			case IN_PROCESS:
				return new Choice(IN_PROCESS, null, null);
			default:
				throw new IllegalStateException("Unknown " + RedisNodes.BACKEND_PROPERTY + "=" + forced
						+ "; use one of " + TESTCONTAINERS + ", " + PATH + ", " + EMBEDDED + ", " + IN_PROCESS);
		}
	}

	/** Starts one node of the chosen backend. */
	static ManagedNode startNode(Choice choice) {
		return startNode(choice, null);
	}

	/**
	 * Starts one node of the chosen backend, serving TLS too when certificates are given.
	 */
	static ManagedNode startNode(Choice choice, @Nullable TestCertificates tls) {
		return startNode(choice, tls, List.of());
	}

	/**
	 * Starts one node of the chosen backend, serving TLS too when certificates are given,
	 * with further {@code redis-server} arguments.
	 */
	static ManagedNode startNode(Choice choice, @Nullable TestCertificates tls, List<String> arguments) {
		switch (choice.name()) {
			case TESTCONTAINERS:
				if (tls != null) {
					throw new IllegalStateException("TLS nodes need a local redis-server: run with -D"
							+ RedisNodes.BACKEND_PROPERTY + "=" + EMBEDDED + " or " + PATH);
				}
				return ContainerRedisNode.start(arguments);
			case PATH:
				return ProcessRedisNode.start(requireNonNull(choice.executable()), tls, false, arguments);
			case EMBEDDED:
				return ProcessRedisNode.start(extractEmbedded(requireNonNull(choice.resource())), tls, false,
						arguments);
			case IN_PROCESS:
				if (tls != null || !arguments.isEmpty()) {
					throw new IllegalStateException("TLS nodes and nodes with server options (DEBUG) need a real "
							+ "redis-server, not the in-process stand-in: run with -D" + RedisNodes.BACKEND_PROPERTY
							+ "=" + EMBEDDED + " or " + PATH);
				}
				return InProcessRedisNode.start();
			case STEPPABLE_CLOCK:
				return ProcessRedisNode.start(extractEmbedded(requireNonNull(choice.resource())), tls, true, arguments);
			default:
				throw new IllegalStateException("unknown backend " + choice.name());
		}
	}

	/**
	 * The {@code redis-server} binary to run as a process: the chosen backend's, or, for
	 * a backend that runs none (containers, the in-process stand-in), the one on PATH,
	 * else the embedded one.
	 */
	static Path processExecutable(Choice choice) {
		switch (choice.name()) {
			case PATH:
				return requireNonNull(choice.executable());
			case EMBEDDED, STEPPABLE_CLOCK:
				return extractEmbedded(requireNonNull(choice.resource()));
			default:
				Path onPath = findOnPath(System.getenv("PATH"));
				return (onPath != null) ? onPath : RedisNodes.embeddedServer();
		}
	}

	/**
	 * The {@code redis-server} arguments that let a server of the chosen backend accept
	 * {@code DEBUG}: {@code enable-debug-command} from Redis 7 on (the container image is
	 * 7), none before (6.2 allows {@code DEBUG} and refuses to start with an option it
	 * does not know).
	 */
	static List<String> debugCommandArguments(Choice choice) {
		int major = switch (choice.name()) {
			case TESTCONTAINERS, IN_PROCESS -> 7;
			case PATH -> ProcessRedisNode.majorVersion(requireNonNull(choice.executable()));
			default -> ProcessRedisNode.majorVersion(extractEmbedded(requireNonNull(choice.resource())));
		};
		return (major >= 7) ? List.of("--enable-debug-command", "yes") : List.of();
	}

	/**
	 * Looks for an executable {@code redis-server} in the directories of a PATH value.
	 * @return its path, or null if there is none
	 */
	static @Nullable Path findOnPath(@Nullable String pathValue) {
		if (pathValue == null || pathValue.isBlank()) {
			return null;
		}
		for (String dir : pathValue.split(File.pathSeparator)) {
			if (dir.isBlank()) {
				continue;
			}
			try {
				Path candidate = Path.of(dir, "redis-server");
				if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
					return candidate;
				}
			}
			catch (RuntimeException ignored) {
				// malformed PATH entry
			}
		}
		return null;
	}

	/**
	 * The name of the embedded-redis resource for an OS and architecture, if it is on the
	 * class path.
	 * @return the resource name, or null if there is no binary for this platform
	 */
	static @Nullable String embeddedResource(String osName, String osArch) {
		String name = embeddedResourceName(osName, osArch);
		return name != null && findResource(name) != null ? name : null;
	}

	/**
	 * Maps {@code os.name}/{@code os.arch} to a binary bundled in embedded-redis 1.4.4,
	 * or null.
	 */
	static @Nullable String embeddedResourceName(String osName, String osArch) {
		String os = osName.toLowerCase(Locale.ROOT);
		String arch = osArch.toLowerCase(Locale.ROOT);
		boolean amd64 = arch.equals("amd64") || arch.equals("x86_64");
		boolean arm64 = arch.equals("aarch64") || arch.equals("arm64");
		boolean x86 = arch.equals("x86") || arch.equals("i386") || arch.equals("i486") || arch.equals("i586")
				|| arch.equals("i686");
		if (os.contains("linux")) {
			if (amd64) {
				return "redis-server-6.2.6-v5-linux-amd64";
			}
			if (arm64) {
				return "redis-server-6.2.7-linux-arm64";
			}
			if (x86) {
				return "redis-server-6.2.7-linux-386";
			}
		}
		else if (os.contains("mac") || os.contains("darwin")) {
			if (amd64) {
				return "redis-server-6.2.6-v5-darwin-amd64";
			}
			if (arm64) {
				return "redis-server-6.2.6-v5-darwin-arm64";
			}
		}
		return null;
	}

	/**
	 * Extracts the bundled binary once per JVM into a temp directory that is deleted on
	 * exit.
	 */
	static synchronized Path extractEmbedded(String resource) {
		Path done = extractedEmbedded;
		if (done != null && Files.isExecutable(done)) {
			return done;
		}
		URL url = findResource(resource);
		if (url == null) {
			throw new IllegalStateException("resource " + resource + " not found; " + HOW_TO_GET_REDIS);
		}
		try {
			Path dir = Files.createTempDirectory("redlock-test-redis-bin-");
			dir.toFile().deleteOnExit(); // registered first, so deleted after the file
			Path exe = dir.resolve("redis-server");
			exe.toFile().deleteOnExit();
			try (InputStream in = url.openStream()) {
				Files.copy(in, exe, StandardCopyOption.REPLACE_EXISTING);
			}
			if (!exe.toFile().setExecutable(true, true)) {
				throw new IllegalStateException("could not make " + exe + " executable");
			}
			extractedEmbedded = exe;
			return exe;
		}
		catch (IOException e) {
			throw new UncheckedIOException("could not extract " + resource, e);
		}
	}

	/**
	 * Whether Testcontainers is on the class path and a Docker engine answers; asked once
	 * per JVM.
	 */
	static boolean isDockerAvailable() {
		Boolean known = dockerAvailable;
		if (known != null) {
			return known;
		}
		synchronized (Backends.class) {
			if (dockerAvailable == null) {
				dockerAvailable = isClassPresent(DOCKER_FACTORY_CLASS) && ContainerRedisNode.isDockerAvailable();
			}
			return requireNonNull(dockerAvailable);
		}
	}

	static boolean isClassPresent(String className) {
		try {
			Class.forName(className, false, Backends.class.getClassLoader());
			return true;
		}
		catch (ClassNotFoundException | LinkageError e) {
			return false;
		}
	}

	private static @Nullable URL findResource(String name) {
		ClassLoader own = Backends.class.getClassLoader();
		URL url = own == null ? null : own.getResource(name);
		if (url == null) {
			ClassLoader context = Thread.currentThread().getContextClassLoader();
			url = context == null ? null : context.getResource(name);
		}
		return url;
	}

	private static <T> T requireNonNull(@Nullable T value) {
		if (value == null) {
			throw new IllegalStateException("internal error: missing value");
		}
		return value;
	}

}
