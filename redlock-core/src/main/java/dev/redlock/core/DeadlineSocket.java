package dev.redlock.core;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;

/**
 * A connected socket whose reads can be bounded by a deadline rather than by a timeout
 * per read: a reply that trickles in a byte at a time then costs a round its deadline,
 * not the timeout once per byte. Jedis reads through {@link #getInputStream()};
 * everything else goes to the socket it wraps (plain or TLS).
 */
final class DeadlineSocket extends Socket {

	private final Socket socket;

	private final InputStream input;

	/** The read timeout Jedis asked for, in force while no deadline is. */
	private volatile int timeoutMillis;

	/** The read timeout last set on the socket. */
	private int appliedMillis = -1;

	private volatile boolean deadlineSet;

	private volatile long deadlineNanos;

	DeadlineSocket(Socket socket) throws IOException {
		this.socket = socket;
		this.timeoutMillis = socket.getSoTimeout();
		this.appliedMillis = this.timeoutMillis;
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
	 * stream of rounds the socket keeps the timeout of the last (the same, to the
	 * millisecond, when rounds are quick): setting it again would box a new
	 * {@code Integer} every time.
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
	 * Before a read: what is left of the deadline becomes the read's timeout, or the read
	 * timeout when there is no deadline.
	 */
	private void beforeRead() throws IOException {
		// at least 1 ms, even past the deadline: bytes already here are still read (a
		// busy caller may come to them late)
		apply(this.deadlineSet ? RoundTimes.millisLeft(this.deadlineNanos) : this.timeoutMillis);
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

	@Override
	public void close() throws IOException {
		this.socket.close();
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
			beforeRead();
			return super.read();
		}

		@Override
		public int read(byte[] buffer, int offset, int length) throws IOException {
			beforeRead();
			return this.in.read(buffer, offset, length);
		}

	}

}
