package dev.redlock.core;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisSocketFactory;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisSocketFactory;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * A Jedis connection for rounds across nodes: buffered commands can be flushed without
 * waiting for the reply (so a command reaches every node before any reply is read), and
 * it tells whether a reply has arrived (so a round reads the nodes that have answered
 * first).
 */
final class PipelinedConnection extends Connection {

	private final SocketCapture capture;

	PipelinedConnection(HostAndPort hostAndPort, JedisClientConfig config) {
		this(new SocketCapture(new DefaultJedisSocketFactory(hostAndPort, config)), config);
	}

	private PipelinedConnection(SocketCapture capture, JedisClientConfig config) {
		super(capture, config);
		this.capture = capture;
	}

	/**
	 * {@link System#nanoTime()} when it was last given back idle: its pool closes it
	 * after a while unused.
	 */
	long idleSince;

	/**
	 * The read timeout last set, so an unchanged one is not set again (each call boxes
	 * it, above 127 ms).
	 */
	private int appliedSoTimeout = -1;

	@Override
	public void setSoTimeout(int soTimeout) {
		if (soTimeout != this.appliedSoTimeout) {
			super.setSoTimeout(soTimeout);
			this.appliedSoTimeout = soTimeout;
		}
	}

	/**
	 * Replies this connection owes: commands sent through {@link #send} whose reply was
	 * not read by {@link #readReply}. Only a connection that owes nothing may be reused,
	 * else its next user would read another command's reply as its own.
	 */
	private int owedReplies;

	/**
	 * Buffers a command, to be sent by {@link #flushNow}; its reply is then owed until
	 * {@link #readReply} reads it.
	 * @param command the command
	 */
	void send(CommandArguments command) {
		this.owedReplies++;
		sendCommand(command);
	}

	/** Sends what {@link #send} buffered, without reading. */
	void flushNow() {
		flush();
	}

	/**
	 * Writes and sends a command behind one whose reply is still owed; a write that fails
	 * breaks the connection.
	 * @return whether it was sent
	 */
	boolean sendBehind(CommandArguments followUp) {
		try {
			send(followUp);
			flushNow();
			return true;
		}
		catch (JedisException ex) {
			setBroken();
			return false;
		}
	}

	/**
	 * Reads the oldest owed reply.
	 * @return the reply ({@code byte[]}, {@code Long}, a list, or {@code null})
	 * @throws redis.clients.jedis.exceptions.JedisDataException for an error reply (read,
	 * so no longer owed)
	 * @throws redis.clients.jedis.exceptions.JedisConnectionException if the connection
	 * broke or timed out (it then still owes the reply and is broken)
	 */
	@Nullable Object readReply() {
		try {
			Object reply = getUnflushedObject();
			this.owedReplies--;
			return reply;
		}
		catch (JedisDataException ex) {
			// an error reply was read all the same
			this.owedReplies--;
			throw ex;
		}
	}

	/**
	 * Whether this connection can be handed to another user: not broken, and no reply of
	 * an earlier command is still waiting to be read.
	 * @return {@code true} if reusable
	 */
	boolean isReusable() {
		return this.owedReplies == 0 && !isBroken();
	}

	/**
	 * Whether bytes of a reply are waiting to be read, so reading would not block. Only a
	 * hint: a TLS connection, whose bytes are still encrypted, says {@code false} until
	 * they are read.
	 */
	boolean replyArrived() {
		InputStream input = this.capture.input;
		try {
			return input != null && input.available() > 0;
		}
		catch (IOException ex) {
			// let the read report the failure
			return true;
		}
	}

	/**
	 * Closes the socket at once, without flushing what is buffered (a close that flushes
	 * blocks as long as a write does when the node stopped reading): a write blocked on
	 * it fails, and the connection is broken.
	 */
	void abort() {
		setBroken();
		Socket socket = this.capture.socket;
		if (socket != null) {
			try {
				socket.close();
			}
			catch (IOException ex) {
				// closed already
			}
		}
	}

	/**
	 * Keeps the socket Jedis opens and its input stream, which {@link Connection} does
	 * not expose.
	 */
	private static final class SocketCapture implements JedisSocketFactory {

		private final JedisSocketFactory delegate;

		private volatile @Nullable InputStream input;

		private volatile @Nullable Socket socket;

		SocketCapture(JedisSocketFactory delegate) {
			this.delegate = delegate;
		}

		@Override
		public Socket createSocket() {
			Socket socket = this.delegate.createSocket();
			this.socket = socket;
			try {
				this.input = socket.getInputStream();
			}
			catch (IOException ex) {
				// without it every reply counts as not yet arrived: nodes are then read
				// in order
				this.input = null;
			}
			return socket;
		}

	}

}
