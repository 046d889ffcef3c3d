package dev.redlock.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP proxy on loopback that forwards to one server and delays every chunk of bytes, in
 * each direction, by a configurable one-way delay: a request/reply round trip through it
 * costs at least twice the delay. Point a client at {@link #uri()} instead of the node's
 * own address to give that node latency.
 *
 * <pre>{@code
 * try (LatencyProxy slow = LatencyProxy.to(redis.node(0), Duration.ofMillis(60))) {
 *     Redlock redlock = Redlock.builder().node(slow.uri())...;
 *     slow.delay(Duration.ZERO); // fast again, for bytes read from now on
 * }
 * }</pre>
 *
 * <p>
 * Bytes keep their order; a chunk is held back until {@code delay} after it was read, so
 * throughput is not limited by the delay. Each connection uses four threads (a reader and
 * a delayed writer per direction); closing the proxy closes every connection and stops
 * every thread.
 */
public final class LatencyProxy implements AutoCloseable {

	private static final AtomicInteger IDS = new AtomicInteger();

	/** Marks the end of a stream in a direction's queue. */
	private static final Chunk END = new Chunk(0, new byte[0]);

	private volatile String targetHost;

	private volatile int targetPort;

	private final ServerSocket server;

	private final Thread acceptor;

	private final String threadPrefix;

	private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();

	private final List<Thread> threads = new ArrayList<>();

	private final AtomicBoolean closed = new AtomicBoolean();

	private volatile long delayNanos;

	private volatile long trickleNanos;

	private final AtomicInteger accepted = new AtomicInteger();

	private LatencyProxy(String targetHost, int targetPort, Duration delay) throws IOException {
		this.targetHost = targetHost;
		this.targetPort = targetPort;
		this.delayNanos = checked(delay).toNanos();
		this.server = new ServerSocket();
		this.server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
		this.threadPrefix = "redlock-test-latency-proxy-" + IDS.incrementAndGet();
		this.acceptor = newThread("accept", this::accept);
		this.acceptor.start();
	}

	/**
	 * Starts a proxy in front of a node, at the node's current address.
	 * @param node the node to forward to
	 * @param delay the one-way delay, zero or positive
	 * @return the running proxy; close it when done
	 * @throws java.io.UncheckedIOException if no loopback port can be bound
	 */
	public static LatencyProxy to(RedisNode node, Duration delay) {
		return to(node.host(), node.port(), delay);
	}

	/**
	 * Starts a proxy in front of any TCP server.
	 * @param host the server's host
	 * @param port the server's port
	 * @param delay the one-way delay, zero or positive
	 * @return the running proxy; close it when done
	 * @throws java.io.UncheckedIOException if no loopback port can be bound
	 */
	public static LatencyProxy to(String host, int port, Duration delay) {
		try {
			return new LatencyProxy(host, port, delay);
		}
		catch (IOException e) {
			throw new java.io.UncheckedIOException("could not bind a loopback port for a latency proxy", e);
		}
	}

	/**
	 * Sends the connections opened from now on to another node, and closes those open
	 * now: what clients see when a replica is promoted behind a master's address (a
	 * virtual IP, a DNS name, a managed service's endpoint) after the master died.
	 * @param node the node to forward to from now on
	 */
	public void retarget(RedisNode node) {
		this.targetHost = node.host();
		this.targetPort = node.port();
		for (Socket socket : this.sockets) {
			closeQuietly(socket);
		}
	}

	/**
	 * The proxy's host.
	 * @return {@code "127.0.0.1"}: it listens on loopback only
	 */
	public String host() {
		return server.getInetAddress().getHostAddress();
	}

	/**
	 * The port the proxy listens on.
	 * @return a free loopback port chosen at start
	 */
	public int port() {
		return server.getLocalPort();
	}

	/**
	 * The proxy's address as a Redis URI.
	 * @return {@code "redis://127.0.0.1:" + port()}
	 */
	public String uri() {
		return "redis://" + host() + ":" + port();
	}

	/**
	 * The current one-way delay.
	 * @return the delay added to each chunk read from now on
	 */
	public Duration delay() {
		return Duration.ofNanos(delayNanos);
	}

	/**
	 * Changes the one-way delay for chunks read from now on; chunks already held keep
	 * theirs.
	 * @param delay zero or positive
	 * @throws IllegalArgumentException if negative
	 */
	public void delay(Duration delay) {
		this.delayNanos = checked(delay).toNanos();
	}

	/**
	 * Makes replies trickle in: each byte a node sends is held for this long after the
	 * one before it (on top of the one-way delay), so a reply arrives one byte at a time
	 * and each read of it returns quickly while the whole reply takes its length times
	 * this. Applies to replies written from now on.
	 * @param perByte zero (off, the default) or positive
	 * @throws IllegalArgumentException if negative
	 */
	public void trickle(Duration perByte) {
		this.trickleNanos = checked(perByte).toNanos();
	}

	/**
	 * How many connections are open through the proxy.
	 * @return the number of client connections not yet closed
	 */
	public int openConnections() {
		return sockets.size() / 2;
	}

	/**
	 * How many connections the proxy has accepted since it started, closed ones included:
	 * a client that keeps reconnecting shows here.
	 * @return the number of accepted client connections
	 */
	public int acceptedConnections() {
		return accepted.get();
	}

	/**
	 * Closes the listening socket and every connection, and waits for every thread to
	 * stop. Idempotent.
	 */
	@Override
	public void close() {
		if (!closed.compareAndSet(false, true)) {
			return;
		}
		closeQuietly(server);
		sockets.forEach(LatencyProxy::closeQuietly);
		List<Thread> started;
		synchronized (threads) {
			started = new ArrayList<>(threads);
		}
		started.add(acceptor);
		for (Thread thread : started) {
			thread.interrupt();
		}
		boolean interrupted = false;
		for (Thread thread : started) {
			try {
				thread.join(Duration.ofSeconds(2).toMillis());
			}
			catch (InterruptedException e) {
				interrupted = true;
			}
		}
		if (interrupted) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public String toString() {
		return "LatencyProxy[" + uri() + " -> " + targetHost + ":" + targetPort + ", delay " + delay().toMillis()
				+ " ms]";
	}

	private void accept() {
		while (!closed.get()) {
			Socket client;
			try {
				client = server.accept();
			}
			catch (IOException e) {
				return; // closed
			}
			accepted.incrementAndGet();
			Socket upstream = new Socket();
			try {
				client.setTcpNoDelay(true);
				upstream.setTcpNoDelay(true);
				upstream.connect(new InetSocketAddress(targetHost, targetPort), 2_000);
			}
			catch (IOException e) {
				closeQuietly(client);
				closeQuietly(upstream);
				continue; // the client sees the connection closed, as if the server
							// refused it
			}
			sockets.add(client);
			sockets.add(upstream);
			if (closed.get()) {
				closeQuietly(client);
				closeQuietly(upstream);
				return;
			}
			pipe(client, upstream, "request", false);
			pipe(upstream, client, "reply", true);
		}
	}

	/**
	 * Starts a reader and a delayed writer carrying bytes from one socket to the other.
	 */
	private void pipe(Socket from, Socket to, String direction, boolean mayTrickle) {
		BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
		Runnable reader = () -> {
			byte[] buffer = new byte[16 * 1024];
			try {
				InputStream in = from.getInputStream();
				int n;
				while ((n = in.read(buffer)) >= 0) {
					queue.add(new Chunk(System.nanoTime() + delayNanos, Arrays.copyOf(buffer, n)));
				}
			}
			catch (IOException e) {
				// closed or reset: ends the stream
			}
			finally {
				queue.add(END);
			}
		};
		Runnable writer = () -> {
			try {
				OutputStream out = to.getOutputStream();
				while (true) {
					Chunk chunk = queue.take();
					if (chunk == END) {
						break;
					}
					for (long wait = chunk.due - System.nanoTime(); wait > 0; wait = chunk.due - System.nanoTime()) {
						LockSupport.parkNanos(wait);
						if (Thread.currentThread().isInterrupted()) {
							return;
						}
					}
					long trickle = mayTrickle ? trickleNanos : 0;
					if (trickle == 0) {
						out.write(chunk.bytes);
						out.flush();
					}
					else {
						for (byte b : chunk.bytes) {
							LockSupport.parkNanos(trickle);
							if (Thread.currentThread().isInterrupted()) {
								return;
							}
							out.write(b);
							out.flush();
						}
					}
				}
			}
			catch (IOException | InterruptedException e) {
				// closed, or the proxy is closing
			}
			finally {
				disconnect(from, to);
			}
		};
		Thread readerThread = newThread(direction + "-read", reader);
		Thread writerThread = newThread(direction + "-write", writer);
		synchronized (threads) {
			threads.removeIf(thread -> !thread.isAlive() && thread.getState() != Thread.State.NEW);
			threads.add(readerThread);
			threads.add(writerThread);
		}
		readerThread.start();
		writerThread.start();
	}

	/** Ends a connection in both directions once either side is done with it. */
	private void disconnect(Socket a, Socket b) {
		closeQuietly(a);
		closeQuietly(b);
		sockets.remove(a);
		sockets.remove(b);
	}

	private Thread newThread(String role, Runnable task) {
		Thread thread = new Thread(task, threadPrefix + "-" + role);
		thread.setDaemon(true);
		return thread;
	}

	private static Duration checked(Duration delay) {
		if (delay == null || delay.isNegative()) {
			throw new IllegalArgumentException("delay must be zero or positive, was " + delay);
		}
		return delay;
	}

	private static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (Exception ignored) {
			// closing anyway
		}
	}

	/**
	 * Bytes read at some time, to be written at {@code due} ({@link System#nanoTime()}).
	 */
	private record Chunk(long due, byte[] bytes) {
	}

}
