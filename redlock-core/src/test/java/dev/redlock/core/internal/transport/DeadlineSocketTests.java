package dev.redlock.core.internal.transport;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * How reads bounded by a deadline set the socket's timeout: over a loopback connection to
 * a server socket of the test's own, which writes only when told to.
 */
class DeadlineSocketTests {

	private static final long MILLIS = TimeUnit.MILLISECONDS.toNanos(1);

	private ServerSocket server;

	private Socket accepted;

	private CountingSocket client;

	private DeadlineSocket socket;

	@BeforeEach
	void connect() throws IOException {
		this.server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
		this.client = new CountingSocket();
		this.client.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.server.getLocalPort()));
		this.accepted = this.server.accept();
		this.socket = new DeadlineSocket(this.client);
	}

	@AfterEach
	void close() throws IOException {
		this.socket.close();
		this.accepted.close();
		this.server.close();
	}

	@Test
	void roundsStartingOneAfterAnotherKeepTheTimeoutInForce() throws IOException {
		this.accepted.getOutputStream().write(new byte[] { 1, 2 });
		InputStream input = this.socket.getInputStream();
		this.socket.readBy(System.nanoTime() + 49 * MILLIS + MILLIS / 2);
		assertThat(input.read()).isEqualTo(1);
		this.socket.clearDeadline();
		this.socket.readBy(System.nanoTime() + 40 * MILLIS + MILLIS / 2);
		assertThat(input.read()).isEqualTo(2);
		// 49 and 40 ms left: both read with 32 ms in force, set once
		assertThat(this.client.timeoutsSet).hasValue(1);
		assertThat(this.client.lastTimeout).isEqualTo(32);
	}

	@Test
	void aReadWaitsUntilTheDeadlineNotJustTheTimeoutInForce() throws Exception {
		CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
			try {
				// the reader timed out with 1,024 ms in force and read again
				if (this.client.secondTimeoutSet.await(30, TimeUnit.SECONDS)) {
					this.accepted.getOutputStream().write(7);
				}
			}
			catch (IOException | InterruptedException ex) {
				throw new IllegalStateException(ex);
			}
		});
		this.socket.readBy(System.nanoTime() + 2_000 * MILLIS);
		assertThat(this.socket.getInputStream().read()).isEqualTo(7);
		writer.get(30, TimeUnit.SECONDS);
	}

	@Test
	void aReadThatGetsNothingGivesUpAtTheDeadline() {
		long start = System.nanoTime();
		this.socket.readBy(start + 300 * MILLIS);
		assertThatExceptionOfType(SocketTimeoutException.class).isThrownBy(() -> this.socket.getInputStream().read());
		// not when the 256 ms first in force ran out; a millisecond early at most
		assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(299 * MILLIS);
		assertThat(this.client.timeoutsSet).hasValueGreaterThan(1);
	}

	@Test
	void aReadWithoutADeadlineHasTheReadTimeout() throws IOException {
		this.socket.setSoTimeout(2_000);
		this.socket.readBy(System.nanoTime() + 100 * MILLIS);
		this.socket.clearDeadline();
		this.accepted.getOutputStream().write(3);
		assertThat(this.socket.getInputStream().read()).isEqualTo(3);
		assertThat(this.client.lastTimeout).isEqualTo(2_000);
	}

	@Test
	void abortClosesTheConnectionUnderALayeredSocketNotTheLayer() throws IOException {
		AtomicInteger layerCloses = new AtomicInteger();
		// stands for a TLS socket, whose close() would wait for a write in progress
		Socket layer = new Socket() {

			@Override
			public InputStream getInputStream() throws IOException {
				return DeadlineSocketTests.this.client.getInputStream();
			}

			@Override
			public synchronized void close() {
				layerCloses.incrementAndGet();
			}

		};
		DeadlineSocket layered = new DeadlineSocket(layer, this.client);
		layered.abort();
		assertThat(this.client.isClosed()).isTrue();
		assertThat(layerCloses).hasValue(0);
		assertThatExceptionOfType(SocketException.class).isThrownBy(() -> layered.getInputStream().read());
	}

	/** A plain socket that counts the read timeouts set on it. */
	private static final class CountingSocket extends Socket {

		private final AtomicInteger timeoutsSet = new AtomicInteger();

		private final CountDownLatch secondTimeoutSet = new CountDownLatch(2);

		private volatile int lastTimeout;

		@Override
		public void setSoTimeout(int timeout) throws SocketException {
			super.setSoTimeout(timeout);
			this.lastTimeout = timeout;
			this.timeoutsSet.incrementAndGet();
			this.secondTimeoutSet.countDown();
		}

	}

}
