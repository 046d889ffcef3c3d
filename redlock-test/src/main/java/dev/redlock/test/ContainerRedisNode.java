package dev.redlock.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A Redis server in a Docker container (backend {@code testcontainers}). Loaded only when
 * Testcontainers is on the class path. A restart starts a new container, so the mapped
 * port may change.
 */
final class ContainerRedisNode implements ManagedNode {

	private static final DockerImageName IMAGE = DockerImageName.parse("redis:7-alpine");

	private static final int REDIS_PORT = 6379;

	private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

	private @Nullable GenericContainer<?> container;

	private String host = ProcessRedisNode.LOOPBACK;

	private int port;

	private boolean paused;

	private boolean stopped;

	/** Further {@code redis-server} arguments, given at every start. */
	private final List<String> arguments;

	private ContainerRedisNode(List<String> arguments) {
		this.arguments = List.copyOf(arguments);
	}

	static boolean isDockerAvailable() {
		try {
			return DockerClientFactory.instance().isDockerAvailable();
		}
		catch (Throwable e) {
			return false;
		}
	}

	static ContainerRedisNode start() {
		return start(List.of());
	}

	/** Starts a container whose server gets further {@code redis-server} arguments. */
	static ContainerRedisNode start(List<String> arguments) {
		ContainerRedisNode node = new ContainerRedisNode(arguments);
		Cleanup.track(node);
		try {
			node.launch();
			return node;
		}
		catch (RuntimeException | Error e) {
			node.stop();
			throw e;
		}
	}

	@Override
	public synchronized String host() {
		return host;
	}

	@Override
	public synchronized int port() {
		return port;
	}

	@Override
	public synchronized boolean isRunning() {
		GenericContainer<?> c = container;
		try {
			return c != null && c.isRunning();
		}
		catch (RuntimeException e) {
			return false;
		}
	}

	@Override
	public synchronized boolean isPaused() {
		return paused && isRunning();
	}

	@Override
	public synchronized void kill() {
		GenericContainer<?> c = container;
		paused = false;
		if (c == null || !isRunning()) {
			return;
		}
		c.getDockerClient().killContainerCmd(c.getContainerId()).exec();
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (isRunning()) {
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException("container " + c.getContainerId() + " still runs after docker kill");
			}
			sleepBriefly();
		}
	}

	@Override
	public synchronized void pause() {
		GenericContainer<?> c = container;
		if (c == null || !isRunning()) {
			throw new IllegalStateException("node " + uri() + " is not running");
		}
		c.getDockerClient().pauseContainerCmd(c.getContainerId()).exec();
		paused = true;
	}

	@Override
	public synchronized void resume() {
		GenericContainer<?> c = container;
		if (!paused || c == null) {
			return;
		}
		c.getDockerClient().unpauseContainerCmd(c.getContainerId()).exec();
		paused = false;
	}

	@Override
	public synchronized void restart() {
		if (stopped) {
			throw new IllegalStateException("node " + uri() + " was stopped by close()");
		}
		if (paused) {
			resume();
		}
		GenericContainer<?> old = container;
		container = null;
		if (old != null) {
			old.stop();
		}
		launch();
	}

	@Override
	public void stop() {
		GenericContainer<?> c;
		synchronized (this) {
			if (stopped) {
				return;
			}
			stopped = true;
			c = container;
			container = null;
		}
		try {
			if (c != null) {
				if (paused) {
					try {
						c.getDockerClient().unpauseContainerCmd(c.getContainerId()).exec();
					}
					catch (RuntimeException ignored) {
						// stop() removes it anyway
					}
				}
				c.stop();
			}
		}
		catch (Throwable ignored) {
			// never throws; Testcontainers' reaper removes what is left
		}
		finally {
			synchronized (this) {
				paused = false;
			}
			Cleanup.untrack(this);
		}
	}

	@Override
	public String toString() {
		return "redis container " + uri();
	}

	private void launch() {
		List<String> command = new ArrayList<>(List.of("redis-server", "--save", "", "--appendonly", "no"));
		command.addAll(this.arguments);
		GenericContainer<?> c = new GenericContainer<>(IMAGE).withExposedPorts(REDIS_PORT)
			.withCommand(command.toArray(String[]::new));
		c.start();
		synchronized (this) {
			container = c;
			host = c.getHost();
			port = c.getMappedPort(REDIS_PORT);
			paused = false;
		}
		long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
		while (true) {
			try {
				if ("PONG".equals(Resp.call(host, port, Duration.ofMillis(500), "PING"))) {
					return;
				}
			}
			catch (RuntimeException notYet) {
				// not ready yet
			}
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException(
						"redis container " + c.getContainerId() + " did not answer PING; " + "log:\n" + c.getLogs());
			}
			sleepBriefly();
		}
	}

	private static void sleepBriefly() {
		try {
			Thread.sleep(20);
		}
		catch (InterruptedException e) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("interrupted while waiting for a Redis container", e);
		}
	}

}
