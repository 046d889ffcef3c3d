package dev.redlock.core.internal.transport;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.util.Arrays;
import java.util.Objects;

import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.protocol.LockCommands;
import dev.redlock.core.internal.protocol.NativeCall;
import dev.redlock.core.internal.protocol.NativeCall.NativeCommandRefusedException;
import dev.redlock.core.internal.protocol.NativeForm;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.DefaultJedisSocketFactory;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisSocketFactory;
import redis.clients.jedis.SSLSocketWrapper;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.util.RedisInputStream;

/**
 * A Jedis connection for rounds across nodes: buffered commands can be flushed without
 * waiting for the reply (so a command reaches every node before any reply is read), and
 * it tells whether a reply has arrived (so a round reads the nodes that have answered
 * first). Calls of the lock scripts a node can run natively go in their native form, and
 * their replies read as the script's ({@link NativeCall}).
 */
public final class PipelinedConnection extends Connection {

	/**
	 * The {@code OK} status reply, the answer to every granted {@code SET}: one array for
	 * all of them rather than a new one per reply, so nobody may change it (replies are
	 * only ever compared).
	 */
	public static final byte[] OK = { 'O', 'K' };

	private static final byte STATUS_REPLY = '+';

	private final SocketCapture capture;

	/**
	 * Jedis's buffered reader of the socket, once a reply was read: the bytes it holds
	 * have arrived.
	 */
	private @Nullable RedisInputStream buffered;

	private final PendingCalls pending = new PendingCalls();

	private LockCommands greeted = LockCommands.SCRIPTS;

	private @Nullable NodeCommands node;

	/** Where commands are encoded once the connection is shared, else {@code null}. */
	private @Nullable WriteBatches batches;

	PipelinedConnection(HostAndPort hostAndPort, JedisClientConfig config) {
		this(new SocketCapture(hostAndPort, config), config);
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
	 * Which of its voter's masters it was opened to ({@link MasterAddress#generation()}):
	 * one opened to a master the voter has moved away from is closed, not reused.
	 */
	int masterGeneration;

	/**
	 * Returns the address this connection was opened to.
	 * @return the server's host and port
	 */
	public HostAndPort address() {
		return this.capture.hostAndPort;
	}

	/**
	 * Bounds the reads of the next replies by a deadline, a round's, rather than by a
	 * timeout per read (a reply trickling in would otherwise take its length times the
	 * timeout); until {@link #clearDeadline()} or a new read timeout.
	 * @param deadline {@link System#nanoTime()} by which reading must be done
	 */
	public void readBy(long deadline) {
		DeadlineSocket socket = this.capture.socket;
		if (socket != null) {
			socket.readBy(deadline);
		}
	}

	/**
	 * Reads are bounded by the read timeout alone again; a failure breaks the connection.
	 */
	public void clearDeadline() {
		DeadlineSocket socket = this.capture.socket;
		if (socket != null) {
			socket.clearDeadline();
		}
	}

	/**
	 * Buffers a command, to be sent by {@link #flushNow}; its reply is then owed until
	 * {@link #readReply} reads it.
	 * @param command the command
	 */
	public void send(CommandArguments command) {
		LockCommands commands = lockCommands();
		NativeCall call = commands.isNative() ? NativeCall.of(command) : null;
		if (call != null) {
			sendNative(call, command, call.commands(command, commands));
		}
		else {
			sendPlain(command);
		}
	}

	/**
	 * Buffers one call of a round, as {@link #send(CommandArguments)}, in the native form
	 * the round shares among its nodes.
	 * @param form the call and its native form
	 */
	public void send(NativeForm form) {
		LockCommands commands = lockCommands();
		NativeCall call = commands.isNative() ? form.nativeCall() : null;
		if (call != null) {
			sendNative(call, form.call(), form.commands(commands));
		}
		else {
			sendPlain(form.call());
		}
	}

	/** Whether calls of the lock scripts go to this node in their native form now. */
	public boolean runsNativeCommands() {
		return lockCommands().isNative();
	}

	private LockCommands lockCommands() {
		NodeCommands node = this.node;
		return (node != null) ? node.effective(this.greeted) : LockCommands.SCRIPTS;
	}

	private void sendNative(NativeCall call, CommandArguments scriptCall, CommandArguments[] commands) {
		this.pending.sentNative(call, NativeCall.value(scriptCall));
		for (CommandArguments command : commands) {
			sendCommand(command);
		}
	}

	private void sendPlain(CommandArguments command) {
		this.pending.sentPlain();
		sendCommand(command);
	}

	/**
	 * Told what the greeting found the node runs the lock's compare-and-delete with: from
	 * now on, calls of those scripts go in their native form while the node takes them.
	 */
	void greeted(LockCommands commands, NodeCommands node) {
		this.greeted = commands;
		this.node = node;
	}

	/**
	 * Shares the connection among callers: from now on its commands are encoded into
	 * write batches, written to the socket by {@link WriteBatches#writeOut}, and
	 * {@link #flushNow()} must not be called. Nothing may be buffered yet.
	 * @return the batches
	 * @throws IOException if the socket is gone
	 */
	WriteBatches share() throws IOException {
		DeadlineSocket socket = this.capture.socket;
		if (socket == null) {
			throw new IOException("not connected");
		}
		WriteBatches batches = new WriteBatches(socket.getOutputStream());
		this.batches = batches;
		return batches;
	}

	/**
	 * Encodes a command into the shared connection's write batch, or buffers it in
	 * Jedis's own stream.
	 */
	@Override
	public void sendCommand(CommandArguments command) {
		WriteBatches batches = this.batches;
		if (batches != null) {
			batches.encode(command);
		}
		else {
			super.sendCommand(command);
		}
	}

	/** Sends what {@link #send} buffered, without reading. */
	public void flushNow() {
		flush();
	}

	/**
	 * Writes and sends a command behind one whose reply is still owed; a write that fails
	 * breaks the connection.
	 * @return whether it was sent
	 */
	public boolean sendBehind(CommandArguments followUp) {
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
	 * Reads the oldest owed reply. What was sent is looked up once its first reply has
	 * been read: those bytes come only after the call was written, so after its sender
	 * recorded it, even when the reader began waiting before the sender had encoded it (a
	 * shared connection's reader).
	 * @return the reply ({@code byte[]}, {@code Long}, a list, or {@code null})
	 * @throws redis.clients.jedis.exceptions.JedisDataException for an error reply (read,
	 * so no longer owed)
	 * @throws redis.clients.jedis.exceptions.JedisConnectionException if the connection
	 * broke or timed out (it then still owes the reply and is broken)
	 */
	public @Nullable Object readReply() {
		Object first = readOrError();
		NativeCall call = this.pending.oldest();
		Object reply;
		try {
			reply = (call != null) ? readNative(call, first) : plain(first);
		}
		catch (JedisDataException ex) {
			// an error reply was read all the same
			this.pending.replyRead();
			throw ex;
		}
		this.pending.replyRead();
		return reply;
	}

	private static @Nullable Object plain(@Nullable Object reply) {
		if (reply instanceof JedisDataException error) {
			throw error;
		}
		return reply;
	}

	/**
	 * Reads the rest of the replies of a call sent in its native form, as the script's
	 * reply.
	 */
	private @Nullable Object readNative(NativeCall call, @Nullable Object first) {
		Object second = (call.replies() > 1) ? readOrError() : null;
		try {
			return call.fold(Objects.requireNonNull(this.pending.oldestValue()), first, second);
		}
		catch (NativeCommandRefusedException ex) {
			NodeCommands node = this.node;
			if (node != null) {
				node.refusedNative(String.valueOf(ex.getMessage()));
			}
			throw ex;
		}
	}

	private @Nullable Object readOrError() {
		try {
			return getUnflushedObject();
		}
		catch (JedisDataException ex) {
			return ex;
		}
	}

	/**
	 * Whether this connection can be handed to another user: not broken, and no reply of
	 * an earlier command is still waiting to be read.
	 * @return {@code true} if reusable
	 */
	boolean isReusable() {
		return this.pending.owed() == 0 && !isBroken();
	}

	/**
	 * Whether {@link #replyArrived()} turns true once a reply arrives: not over TLS.
	 */
	public boolean tellsArrivals() {
		return this.capture.tls == null;
	}

	/**
	 * Whether bytes of a reply are waiting to be read (on the socket, or read into
	 * Jedis's buffer with an earlier reply), so reading would not block. Only a hint: a
	 * TLS connection, whose bytes are still encrypted, says {@code false} until they are
	 * read.
	 */
	public boolean replyArrived() {
		RedisInputStream buffered = this.buffered;
		InputStream input = (buffered != null) ? buffered : this.capture.input;
		try {
			return input != null && input.available() > 0;
		}
		catch (IOException ex) {
			// let the read report the failure
			return true;
		}
	}

	/**
	 * Reads a reply as Jedis does, but for an {@code OK} status, which is {@link #OK}
	 * itself. Only bytes depend on this hook: with a Jedis that no longer calls it,
	 * replies read as before.
	 */
	@Override
	protected Object protocolRead(RedisInputStream input) {
		this.buffered = input;
		return input.peek(STATUS_REPLY) ? readStatus(input) : super.protocolRead(input);
	}

	/**
	 * Reads a status reply, {@link #OK} when it is {@code OK}; any other status is read
	 * into an array of its own, as Jedis would.
	 */
	public static byte[] readStatus(RedisInputStream input) {
		input.readByte();
		int matched = 0;
		byte next = input.readByte();
		while (matched < OK.length && next == OK[matched]) {
			matched++;
			next = input.readByte();
		}
		if (next == '\r') {
			input.readByte();
			return (matched == OK.length) ? OK : Arrays.copyOf(OK, matched);
		}
		byte[] rest = input.readLineBytes();
		byte[] status = new byte[matched + 1 + rest.length];
		System.arraycopy(OK, 0, status, 0, matched);
		status[matched] = next;
		System.arraycopy(rest, 0, status, matched + 1, rest.length);
		return status;
	}

	/**
	 * Closes it, ignoring a failure: a socket already broken has nothing more to tell.
	 */
	void closeQuietly() {
		try {
			close();
		}
		catch (RuntimeException ex) {
			// nothing to do: it is closed either way
		}
	}

	/**
	 * Closes the connection at once, without flushing what is buffered (a close that
	 * flushes blocks as long as a write does when the node stopped reading) and, over
	 * TLS, without the closing alert (see {@link DeadlineSocket#abort()}): a read or
	 * write blocked on it fails, and the connection is broken. Never blocks.
	 */
	public void abort() {
		setBroken();
		DeadlineSocket socket = this.capture.socket;
		if (socket != null) {
			try {
				socket.abort();
			}
			catch (IOException ex) {
				// closed already
			}
		}
	}

	/**
	 * Opens the socket, wrapped so its reads can have a deadline, and keeps it and its
	 * input stream, which {@link Connection} does not expose. Jedis opens the TCP
	 * connection; for TLS this layers the TLS socket over it as Jedis would (host name
	 * for SNI and, through the parameters, for verification), so that the TCP socket
	 * stays within reach of {@link #abort()}.
	 */
	private static final class SocketCapture implements JedisSocketFactory {

		private final HostAndPort hostAndPort;

		private final JedisSocketFactory tcp;

		/** The TLS socket factory, or {@code null} for plain TCP. */
		private final @Nullable SSLSocketFactory tls;

		private final @Nullable SSLParameters sslParameters;

		private volatile @Nullable InputStream input;

		private volatile @Nullable DeadlineSocket socket;

		/**
		 * Takes the timeouts and the TLS settings of the configuration; its
		 * {@code SslOptions} and host name verifier are not used ({@link RedisNodeUri}
		 * sets neither: host names are verified through the SSL parameters).
		 */
		SocketCapture(HostAndPort hostAndPort, JedisClientConfig config) {
			this.hostAndPort = hostAndPort;
			this.tcp = new DefaultJedisSocketFactory(hostAndPort,
					DefaultJedisClientConfig.builder()
						.connectionTimeoutMillis(config.getConnectionTimeoutMillis())
						.socketTimeoutMillis(config.getSocketTimeoutMillis())
						.build());
			this.tls = config.isSsl() ? tlsFactory(config) : null;
			this.sslParameters = config.getSslParameters();
		}

		private static SSLSocketFactory tlsFactory(JedisClientConfig config) {
			SSLSocketFactory factory = config.getSslSocketFactory();
			return (factory != null) ? factory : (SSLSocketFactory) SSLSocketFactory.getDefault();
		}

		@Override
		public Socket createSocket() {
			// connected, with the read timeout set; a failure closed it
			Socket tcp = this.tcp.createSocket();
			DeadlineSocket socket;
			try {
				socket = new DeadlineSocket((this.tls != null) ? layerTls(this.tls, tcp) : tcp, tcp);
			}
			catch (IOException | RuntimeException ex) {
				try {
					tcp.close();
				}
				catch (IOException closing) {
					ex.addSuppressed(closing);
				}
				throw new JedisConnectionException("Failed to create socket.", ex);
			}
			this.socket = socket;
			this.input = socket.getInputStream();
			return socket;
		}

		/**
		 * A TLS socket over the TCP one, which closing it closes too; the handshake
		 * happens on first use, bounded by the read timeout.
		 */
		private Socket layerTls(SSLSocketFactory factory, Socket tcp) throws IOException {
			SSLSocket tlsSocket = (SSLSocket) factory.createSocket(tcp, this.hostAndPort.getHost(),
					this.hostAndPort.getPort(), true);
			if (this.sslParameters != null) {
				tlsSocket.setSSLParameters(this.sslParameters);
			}
			// Jedis's wrapper, as before: its available() counts encrypted bytes
			return new SSLSocketWrapper(tlsSocket, tcp);
		}

	}

}
