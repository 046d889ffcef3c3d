package dev.redlock.core.internal.transport;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLSocket;

/**
 * A connected socket whose reads can be bounded by a deadline rather than by a timeout
 * per read: a reply that trickles in a byte at a time then costs a round its deadline,
 * not the timeout once per byte. Jedis reads through {@link #getInputStream()};
 * everything else goes to the socket it wraps (plain or TLS).
 * <p>
 * On a plain socket the timeout in force while a deadline is set is what is left of it
 * rounded down to a power of two milliseconds, and a read that times out before the
 * deadline simply reads again: rounds that start one after another keep one timeout,
 * where the exact millisecond would have to be set again for most reads of a busy client
 * (a {@code synchronized} call that boxes its value), and a read still waits until the
 * deadline (at most a millisecond less, as before). A TLS socket gets the exact value:
 * whether a read can go on after a timeout that cut a record in two is not something its
 * contract promises.
 * <p>
 * It also keeps the TCP socket under a TLS one, so that {@link #abort()} can end the
 * connection without the TLS layer's say.
 */
final class DeadlineSocket extends Socket {

	private static final long ONE_MILLI_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	private final Socket socket;

	/** The TCP connection: {@link #socket} itself, or the one TLS is layered on. */
	private final Socket tcp;

	private final InputStream input;

	/** Whether a read that timed out before the deadline may read again. */
	private final boolean rereadsAfterTimeout;

	// The fields below are not volatile: one thread at a time uses a connection, and it
	// passes from one to the next through its pool's lock or an executor.

	/** The read timeout Jedis asked for, in force while no deadline is. */
	private int timeoutMillis;

	/** The read timeout last set on the socket. */
	private int appliedMillis = -1;

	private boolean deadlineSet;

	private long deadlineNanos;

	/**
	 * Wraps a plain socket.
	 * @param socket a connected socket
	 */
	DeadlineSocket(Socket socket) throws IOException {
		this(socket, socket);
	}

	/**
	 * Wraps a socket and the TCP socket it runs over.
	 * @param socket a connected socket, plain or TLS
	 * @param tcp {@code socket} itself when plain; for TLS, the TCP socket it is layered
	 * on, which closing {@code socket} closes too
	 */
	DeadlineSocket(Socket socket, Socket tcp) throws IOException {
		this.socket = socket;
		this.tcp = tcp;
		this.timeoutMillis = socket.getSoTimeout();
		this.appliedMillis = this.timeoutMillis;
		this.rereadsAfterTimeout = !(socket instanceof SSLSocket);
		this.input = new DeadlineInput(socket.getInputStream());
	}

	/**
	 * Bounds every read from now on by a deadline, until {@link #clearDeadline()}.
	 * @param deadline {@link System#nanoTime()} by which reads must be done
	 */
	void readBy(long deadline) {
		this.deadlineNanos = deadline;
		this.deadlineSet = true;
	}

	/**
	 * Reads are bounded by the read timeout alone again: it is set on the socket before
	 * the next read without a deadline. A round's reads all have one, so in a steady
	 * stream of rounds the socket keeps the timeout of the last (the same power of two
	 * when rounds are quick).
	 */
	void clearDeadline() {
		this.deadlineSet = false;
	}

	private void apply(int millis) throws SocketException {
		if (millis != this.appliedMillis) {
			this.socket.setSoTimeout(millis);
			this.appliedMillis = millis;
		}
	}

	/**
	 * Before a read: what is left of the deadline becomes the read's timeout (see the
	 * class comment), or the read timeout when there is no deadline.
	 */
	private void beforeRead() throws IOException {
		if (!this.deadlineSet) {
			apply(this.timeoutMillis);
			return;
		}
		// at least 1 ms, even past the deadline: bytes already here are still read (a
		// busy caller may come to them late)
		int left = RoundTimes.millisLeft(this.deadlineNanos);
		apply(this.rereadsAfterTimeout ? Integer.highestOneBit(left) : left);
	}

	/**
	 * Whether a read that timed out should read again: the timeout in force was shorter
	 * than the deadline, which still leaves a millisecond or more.
	 */
	private boolean readsAgain() {
		return this.rereadsAfterTimeout && this.deadlineSet
				&& this.deadlineNanos - System.nanoTime() >= ONE_MILLI_NANOS;
	}

	@Override
	public InputStream getInputStream() {
		return this.input;
	}

	@Override
	public OutputStream getOutputStream() throws IOException {
		return this.socket.getOutputStream();
	}

	/** Sets the read timeout, which replaces a deadline set before. */
	@Override
	public void setSoTimeout(int timeout) throws SocketException {
		this.timeoutMillis = timeout;
		this.deadlineSet = false;
		apply(timeout);
	}

	@Override
	public int getSoTimeout() {
		return this.timeoutMillis;
	}

	/** Closes the connection; a TLS socket first tells the node (a closing alert). */
	@Override
	public void close() throws IOException {
		this.socket.close();
	}

	/**
	 * Closes the TCP connection at once, whatever a thread is doing with it: a read or
	 * write blocked on it fails. A TLS socket's own {@link #close()} writes a closing
	 * alert, and a write to a node that stopped reading waits with no timeout: the alert
	 * waits behind a write in progress (the JDK's TLS gives up on the alert only when
	 * {@code SO_LINGER} is on, which Jedis sets today), and its own write blocks once the
	 * socket's buffers are full. Closing the socket underneath takes none of the TLS
	 * socket's locks; the TLS socket's own close, later, fails at once on the closed
	 * connection.
	 */
	void abort() throws IOException {
		this.tcp.close();
	}

	@Override
	public boolean isConnected() {
		return this.socket.isConnected();
	}

	@Override
	public boolean isBound() {
		return this.socket.isBound();
	}

	@Override
	public boolean isClosed() {
		return this.socket.isClosed();
	}

	@Override
	public boolean isInputShutdown() {
		return this.socket.isInputShutdown();
	}

	@Override
	public boolean isOutputShutdown() {
		return this.socket.isOutputShutdown();
	}

	@Override
	public void shutdownInput() throws IOException {
		this.socket.shutdownInput();
	}

	@Override
	public void shutdownOutput() throws IOException {
		this.socket.shutdownOutput();
	}

	@Override
	public SocketAddress getRemoteSocketAddress() {
		return this.socket.getRemoteSocketAddress();
	}

	@Override
	public SocketAddress getLocalSocketAddress() {
		return this.socket.getLocalSocketAddress();
	}

	@Override
	public InetAddress getInetAddress() {
		return this.socket.getInetAddress();
	}

	@Override
	public int getPort() {
		return this.socket.getPort();
	}

	@Override
	public int getLocalPort() {
		return this.socket.getLocalPort();
	}

	@Override
	public void setTcpNoDelay(boolean on) throws SocketException {
		this.socket.setTcpNoDelay(on);
	}

	@Override
	public boolean getTcpNoDelay() throws SocketException {
		return this.socket.getTcpNoDelay();
	}

	@Override
	public void setKeepAlive(boolean on) throws SocketException {
		this.socket.setKeepAlive(on);
	}

	@Override
	public boolean getKeepAlive() throws SocketException {
		return this.socket.getKeepAlive();
	}

	@Override
	public String toString() {
		return this.socket.toString();
	}

	/** The socket's input, each read bounded by what is left of the deadline. */
	private final class DeadlineInput extends FilterInputStream {

		DeadlineInput(InputStream in) {
			super(in);
		}

		@Override
		public int read() throws IOException {
			// Jedis reads into its own buffer; this is for completeness
			byte[] one = new byte[1];
			return (read(one, 0, 1) < 0) ? -1 : Byte.toUnsignedInt(one[0]);
		}

		@Override
		public int read(byte[] buffer, int offset, int length) throws IOException {
			while (true) {
				beforeRead();
				try {
					return this.in.read(buffer, offset, length);
				}
				catch (SocketTimeoutException ex) {
					if (!readsAgain()) {
						throw ex;
					}
				}
			}
		}

	}

}
