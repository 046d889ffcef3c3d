package dev.redlock.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

/**
 * A TCP proxy on loopback that writes every chunk of bytes read from either side to the
 * other a fixed delay later, in order, all on one thread with a selector. The test kit's
 * {@code LatencyProxy} runs four threads per connection (a reader and a delayed writer
 * each way), which took a quarter of the benchmark JVM's CPU in the slow scenarios, on
 * the cores the client measured shares: this one wakes once for the bytes that arrive and
 * once when they are due. Delays are kept to the millisecond
 * ({@link Selector#select(long)} waits that long), so a 20 ms delay is 20 to 21 ms.
 */
final class SelectorDelayProxy implements AutoCloseable {

	private static final AtomicInteger IDS = new AtomicInteger();

	private final ServerSocketChannel server;

	private final Selector selector;

	private final InetSocketAddress target;

	private final long delayNanos;

	/**
	 * Chunks waiting for their time, oldest first: one delay for every chunk makes the
	 * order they were read in the order they are due.
	 */
	private final ArrayDeque<Chunk> waiting = new ArrayDeque<>();

	private final ByteBuffer readBuffer = ByteBuffer.allocateDirect(64 * 1024);

	private final Thread thread;

	private volatile boolean closed;

	private SelectorDelayProxy(InetSocketAddress target, Duration delay) throws IOException {
		this.target = target;
		this.delayNanos = delay.toNanos();
		this.selector = Selector.open();
		this.server = ServerSocketChannel.open();
		this.server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
		this.server.configureBlocking(false);
		this.server.register(this.selector, SelectionKey.OP_ACCEPT);
		this.thread = new Thread(this::run, "redlock-bench-delay-proxy-" + IDS.incrementAndGet());
		this.thread.setDaemon(true);
		this.thread.start();
	}

	/**
	 * Starts a proxy in front of a server.
	 * @param host the server's host
	 * @param port the server's port
	 * @param delay added to each direction
	 * @return the running proxy; close it when done
	 */
	static SelectorDelayProxy to(String host, int port, Duration delay) {
		try {
			return new SelectorDelayProxy(new InetSocketAddress(host, port), delay);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("could not start a delay proxy on loopback", ex);
		}
	}

	/**
	 * The proxy's address as a Redis URI.
	 * @return {@code redis://127.0.0.1:PORT}
	 */
	String uri() {
		return "redis://" + InetAddress.getLoopbackAddress().getHostAddress() + ":"
				+ this.server.socket().getLocalPort();
	}

	/** Stops the thread and closes every connection. */
	@Override
	public void close() {
		this.closed = true;
		this.selector.wakeup();
		try {
			this.thread.join(TimeUnit.SECONDS.toMillis(2));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void run() {
		try {
			while (!this.closed) {
				long waitMillis = millisToNextDue();
				if (waitMillis == 0) {
					this.selector.selectNow();
				}
				else if (waitMillis < 0) {
					// nothing waits: until something arrives
					this.selector.select();
				}
				else {
					this.selector.select(waitMillis);
				}
				for (SelectionKey key : this.selector.selectedKeys()) {
					if (key.isValid() && key.isAcceptable()) {
						accept();
					}
					else if (key.isValid() && key.isReadable()) {
						read(key);
					}
				}
				this.selector.selectedKeys().clear();
				writeDue();
			}
		}
		catch (IOException | ClosedSelectorException ex) {
			// closing
		}
		finally {
			for (SelectionKey key : this.selector.keys()) {
				closeQuietly(key.channel());
			}
			closeQuietly(this.selector);
		}
	}

	/**
	 * 0 when a chunk is due now, -1 when none waits, else the milliseconds to the next.
	 */
	private long millisToNextDue() {
		Chunk next = this.waiting.peekFirst();
		if (next == null) {
			return -1;
		}
		long nanos = next.due - System.nanoTime();
		return (nanos <= 0) ? 0 : TimeUnit.NANOSECONDS.toMillis(nanos + TimeUnit.MILLISECONDS.toNanos(1) - 1);
	}

	private void accept() throws IOException {
		SocketChannel client = this.server.accept();
		if (client == null) {
			return;
		}
		SocketChannel upstream;
		try {
			upstream = SocketChannel.open(this.target);
		}
		catch (IOException ex) {
			closeQuietly(client);
			return;
		}
		for (SocketChannel channel : new SocketChannel[] { client, upstream }) {
			channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
			channel.configureBlocking(false);
		}
		client.register(this.selector, SelectionKey.OP_READ, upstream);
		upstream.register(this.selector, SelectionKey.OP_READ, client);
	}

	private void read(SelectionKey key) {
		SocketChannel from = (SocketChannel) key.channel();
		SocketChannel to = (SocketChannel) key.attachment();
		this.readBuffer.clear();
		int read;
		try {
			read = from.read(this.readBuffer);
		}
		catch (IOException ex) {
			read = -1;
		}
		long due = System.nanoTime() + this.delayNanos;
		if (read < 0) {
			key.cancel();
			this.waiting.addLast(new Chunk(due, null, from, to));
			return;
		}
		this.readBuffer.flip();
		ByteBuffer bytes = ByteBuffer.allocate(this.readBuffer.remaining()).put(this.readBuffer).flip();
		this.waiting.addLast(new Chunk(due, bytes, from, to));
	}

	private void writeDue() {
		for (Chunk next = this.waiting.peekFirst(); next != null
				&& next.due - System.nanoTime() <= 0; next = this.waiting.peekFirst()) {
			this.waiting.pollFirst();
			if (next.bytes == null || !writeFully(next.bytes, next.to)) {
				// the end of one side, or a side gone: the connection ends both ways
				closeQuietly(next.from);
				closeQuietly(next.to);
			}
		}
	}

	/** Writes a chunk; a loopback socket takes these few bytes at once, else spins. */
	private static boolean writeFully(ByteBuffer bytes, SocketChannel to) {
		try {
			while (bytes.hasRemaining()) {
				if (to.write(bytes) == 0) {
					Thread.onSpinWait();
				}
			}
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	private static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (Exception ex) {
			// closing anyway
		}
	}

	/** Bytes read from one side at some time, for the other side at {@code due}. */
	private record Chunk(long due, @Nullable ByteBuffer bytes, SocketChannel from, SocketChannel to) {
	}

}
