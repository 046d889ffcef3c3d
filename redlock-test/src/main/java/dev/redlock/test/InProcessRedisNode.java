package dev.redlock.test;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

import dev.redlock.test.InProcessKeyspace.StatusReply;
import dev.redlock.test.Resp.ErrorReply;

/**
 * A stand-in for a Redis server inside the test's JVM (backend {@code inprocess}): a
 * loopback port that speaks RESP2 and serves the commands a {@code Redlock} sends
 * (strings with expiry, Lua scripts, pub/sub, {@code INFO}, {@code TIME}, {@code SCAN},
 * ...) from an {@link InProcessKeyspace}. Nothing to install and nothing to start but
 * threads: for tests of code that uses the lock, on machines with no Redis binary (the
 * kit's bundled one is for Linux and macOS).
 *
 * <p>
 * Its limits: no persistence, ACL, TLS, {@code DEBUG}, replication or native
 * {@code DELEX}/{@code DELIFEQ}; any password is accepted; {@link #pause()} stops it
 * answering (as {@code SIGSTOP} does) but the operating system still accepts connections;
 * {@link #kill()} and {@link #restart()} lose its data, as a server without persistence
 * does. The lock's behaviour is what the client does over these commands; how a real
 * server schedules, fails and recovers is not here: tests of that need real servers.
 */
final class InProcessRedisNode implements ManagedNode {

	private static final AtomicLong NEXT_CLIENT_ID = new AtomicLong();

	private final int port;

	private final Object pauseLock = new Object();

	private volatile @Nullable Server server;

	private volatile boolean paused;

	private volatile boolean stopped;

	private InProcessRedisNode(int port) {
		this.port = port;
	}

	/** Starts a stand-in on a free loopback port. */
	static InProcessRedisNode start() {
		ServerSocket socket = bind(0);
		InProcessRedisNode node = new InProcessRedisNode(socket.getLocalPort());
		node.server = node.new Server(socket);
		return node;
	}

	private static ServerSocket bind(int port) {
		try {
			ServerSocket socket = new ServerSocket();
			socket.setReuseAddress(true);
			socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
			return socket;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot listen on a loopback port for the in-process stand-in", ex);
		}
	}

	@Override
	public String host() {
		return ProcessRedisNode.LOOPBACK;
	}

	@Override
	public int port() {
		return this.port;
	}

	@Override
	public boolean isRunning() {
		return this.server != null;
	}

	@Override
	public boolean isPaused() {
		return this.paused;
	}

	@Override
	public synchronized void kill() {
		Server running = this.server;
		this.server = null;
		resume();
		if (running != null) {
			running.close();
		}
	}

	@Override
	public void pause() {
		this.paused = true;
	}

	@Override
	public void resume() {
		synchronized (this.pauseLock) {
			this.paused = false;
			this.pauseLock.notifyAll();
		}
	}

	@Override
	public synchronized void restart() {
		if (this.stopped) {
			throw new IllegalStateException("node " + uri() + " was stopped for good");
		}
		kill();
		this.server = new Server(bind(this.port));
	}

	@Override
	public synchronized void stop() {
		this.stopped = true;
		kill();
	}

	@Override
	public String toString() {
		return "in-process stand-in " + uri();
	}

	/** Waits while the node is paused; a command is not begun meanwhile. */
	private void awaitResumed() throws InterruptedException {
		synchronized (this.pauseLock) {
			while (this.paused) {
				this.pauseLock.wait();
			}
		}
	}

	/** One run of the server, from a start to a kill: its data dies with it. */
	private final class Server {

		private final ServerSocket socket;

		private final InProcessKeyspace keyspace;

		private final Set<Client> clients = ConcurrentHashMap.newKeySet();

		private final Map<String, Set<Client>> channels = new ConcurrentHashMap<>();

		private volatile long clientPausedUntil;

		private final Thread acceptor;

		Server(ServerSocket socket) {
			this.socket = socket;
			this.keyspace = new InProcessKeyspace(InProcessRedisNode.this.port, this::publish);
			this.acceptor = new Thread(this::accept, "redis-stand-in-" + InProcessRedisNode.this.port);
			this.acceptor.setDaemon(true);
			this.acceptor.start();
		}

		private void accept() {
			while (!this.socket.isClosed()) {
				try {
					Socket connection = this.socket.accept();
					connection.setTcpNoDelay(true);
					Client client = new Client(connection);
					this.clients.add(client);
					Thread thread = new Thread(client::serve,
							"redis-stand-in-" + InProcessRedisNode.this.port + "-client");
					thread.setDaemon(true);
					thread.start();
				}
				catch (IOException ex) {
					// closed: the node was killed
				}
			}
		}

		private long publish(byte[] channel, byte[] message) {
			Set<Client> subscribers = this.channels.getOrDefault(InProcessKeyspace.text(channel), Set.of());
			long received = 0;
			for (Client subscriber : subscribers) {
				if (subscriber.push(List.of(bytes("message"), channel, message))) {
					received++;
				}
			}
			return received;
		}

		/**
		 * Closes the port and every connection; returns once the port is free again: a
		 * socket closed while its thread accepts is released only when that thread has
		 * left {@code accept}, and a restart binds the same port.
		 */
		void close() {
			try {
				this.socket.close();
			}
			catch (IOException ex) {
				// closing anyway
			}
			// the connections are closed once the acceptor has left: one it accepted
			// while
			// the port was closing would otherwise outlive the kill
			if (Thread.currentThread() != this.acceptor) {
				try {
					this.acceptor.join(TimeUnit.SECONDS.toMillis(5));
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
			this.clients.forEach(Client::close);
		}

		/** One connection: reads commands, answers them in order. */
		private final class Client {

			private final Socket connection;

			private final Object writeLock = new Object();

			private final Set<String> subscriptions = new LinkedHashSet<>();

			private final long id = NEXT_CLIENT_ID.incrementAndGet();

			private volatile String name = "";

			private @Nullable OutputStream out;

			Client(Socket connection) {
				this.connection = connection;
			}

			void serve() {
				try (Socket ignored = this.connection) {
					InputStream in = new BufferedInputStream(this.connection.getInputStream());
					this.out = new BufferedOutputStream(this.connection.getOutputStream());
					while (true) {
						List<byte[]> command = readCommand(in);
						if (command == null) {
							return;
						}
						awaitResumed();
						awaitClientPause();
						String name = InProcessKeyspace.text(command.get(0)).toLowerCase(Locale.ROOT);
						boolean quit = name.equals("quit");
						if (name.equals("subscribe") || name.equals("unsubscribe")) {
							// confirmed before any message on the channel, as on a server
							// that runs one command at a time
							synchronized (this.writeLock) {
								write(this.out, answer(command));
								this.out.flush();
							}
							continue;
						}
						Object reply = quit ? InProcessKeyspace.OK : answer(command);
						synchronized (this.writeLock) {
							write(this.out, reply);
							this.out.flush();
						}
						if (quit) {
							return;
						}
					}
				}
				catch (IOException ex) {
					// the client went away, or the node was killed
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				finally {
					unsubscribeAll();
					Server.this.clients.remove(this);
				}
			}

			private void awaitClientPause() throws InterruptedException {
				long left = Server.this.clientPausedUntil - System.currentTimeMillis();
				if (left > 0) {
					Thread.sleep(left);
				}
			}

			private Object answer(List<byte[]> command) {
				String name = InProcessKeyspace.text(command.get(0)).toLowerCase(Locale.ROOT);
				switch (name) {
					case "auth":
						return InProcessKeyspace.OK;
					case "hello":
						return (command.size() > 1 && !"2".equals(InProcessKeyspace.text(command.get(1))))
								? new ErrorReply("NOPROTO the in-process stand-in speaks RESP2 only")
								: List.of(bytes("server"), bytes("redis"), bytes("version"), bytes("7.0.0"),
										bytes("proto"), 2L, bytes("mode"), bytes("standalone"), bytes("role"),
										bytes("master"), bytes("modules"), List.of());
					case "client":
						return client(command);
					case "subscribe":
						return subscribe(command);
					case "unsubscribe":
						return unsubscribe(command);
					case "pubsub":
						return pubsub(command);
					case "ping":
						if (!this.subscriptions.isEmpty()) {
							return List.of(bytes("pong"), (command.size() > 1) ? command.get(1) : bytes(""));
						}
						break;
					default:
						break;
				}
				if (!this.subscriptions.isEmpty()) {
					return new ErrorReply("ERR Can't execute '" + name
							+ "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context");
				}
				synchronized (Server.this.keyspace) {
					return Server.this.keyspace.execute(command);
				}
			}

			private Object client(List<byte[]> command) {
				String sub = (command.size() > 1) ? InProcessKeyspace.text(command.get(1)).toLowerCase(Locale.ROOT)
						: "";
				switch (sub) {
					case "setname":
						this.name = InProcessKeyspace.text(command.get(2));
						return InProcessKeyspace.OK;
					case "getname":
						return this.name.isEmpty() ? null : bytes(this.name);
					case "setinfo":
						return InProcessKeyspace.OK;
					case "unpause":
						Server.this.clientPausedUntil = 0;
						return InProcessKeyspace.OK;
					case "pause":
						Server.this.clientPausedUntil = System.currentTimeMillis()
								+ Long.parseLong(InProcessKeyspace.text(command.get(2)));
						return InProcessKeyspace.OK;
					case "id":
						return this.id;
					case "list": {
						StringBuilder list = new StringBuilder();
						for (Client client : Server.this.clients) {
							list.append(client.describe()).append('\n');
						}
						return bytes(list.toString());
					}
					case "kill":
						return kill(command);
					default:
						return new ErrorReply("ERR unknown subcommand '" + sub + "' of CLIENT");
				}
			}

			private Object subscribe(List<byte[]> command) {
				List<Object> replies = new ArrayList<>();
				for (int i = 1; i < command.size(); i++) {
					String channel = InProcessKeyspace.text(command.get(i));
					this.subscriptions.add(channel);
					Server.this.channels.computeIfAbsent(channel, (name) -> new CopyOnWriteArraySet<>()).add(this);
					replies.add(List.of(bytes("subscribe"), command.get(i), (long) this.subscriptions.size()));
				}
				return new Pushes(replies);
			}

			private Object unsubscribe(List<byte[]> command) {
				List<String> names = new ArrayList<>();
				for (int i = 1; i < command.size(); i++) {
					names.add(InProcessKeyspace.text(command.get(i)));
				}
				if (names.isEmpty()) {
					names.addAll(this.subscriptions);
				}
				if (names.isEmpty()) {
					return Arrays.asList(bytes("unsubscribe"), null, 0L);
				}
				List<Object> replies = new ArrayList<>();
				for (String channel : names) {
					this.subscriptions.remove(channel);
					Set<Client> subscribers = Server.this.channels.get(channel);
					if (subscribers != null) {
						subscribers.remove(this);
					}
					replies.add(List.of(bytes("unsubscribe"), bytes(channel), (long) this.subscriptions.size()));
				}
				return new Pushes(replies);
			}

			private Object pubsub(List<byte[]> command) {
				String sub = (command.size() > 1) ? InProcessKeyspace.text(command.get(1)).toLowerCase(Locale.ROOT)
						: "";
				if (sub.equals("numsub")) {
					List<Object> counts = new ArrayList<>();
					for (int i = 2; i < command.size(); i++) {
						counts.add(command.get(i));
						counts.add((long) Server.this.channels
							.getOrDefault(InProcessKeyspace.text(command.get(i)), Set.of())
							.size());
					}
					return counts;
				}
				if (sub.equals("channels")) {
					List<Object> names = new ArrayList<>();
					Server.this.channels.forEach((channel, subscribers) -> {
						if (!subscribers.isEmpty()) {
							names.add(bytes(channel));
						}
					});
					return names;
				}
				return new ErrorReply("ERR unknown subcommand '" + sub + "' of PUBSUB");
			}

			/** {@code CLIENT KILL TYPE normal|pubsub} or {@code CLIENT KILL ID n}. */
			private Object kill(List<byte[]> command) {
				String filter = (command.size() > 3) ? InProcessKeyspace.text(command.get(2)).toLowerCase(Locale.ROOT)
						: "";
				String value = (command.size() > 3) ? InProcessKeyspace.text(command.get(3)) : "";
				long killed = 0;
				for (Client client : Server.this.clients) {
					boolean matches = switch (filter) {
						case "type" -> value.equalsIgnoreCase("pubsub") == !client.subscriptions.isEmpty();
						case "id" -> Long.toString(client.id).equals(value);
						default -> false;
					};
					if (matches && client != this) {
						client.close();
						killed++;
					}
				}
				return killed;
			}

			private String describe() {
				return "id=" + this.id + " addr=" + this.connection.getRemoteSocketAddress() + " name=" + this.name
						+ " sub=" + this.subscriptions.size() + " psub=0 flags="
						+ (this.subscriptions.isEmpty() ? "N" : "P");
			}

			private void unsubscribeAll() {
				for (String channel : this.subscriptions) {
					Set<Client> subscribers = Server.this.channels.get(channel);
					if (subscribers != null) {
						subscribers.remove(this);
					}
				}
				this.subscriptions.clear();
			}

			/** Writes a message to a subscriber; {@code false} if it is gone. */
			boolean push(Object message) {
				OutputStream target = this.out;
				if (target == null || this.connection.isClosed() || InProcessRedisNode.this.paused) {
					return target != null && !this.connection.isClosed();
				}
				synchronized (this.writeLock) {
					try {
						write(target, message);
						target.flush();
						return true;
					}
					catch (IOException ex) {
						return false;
					}
				}
			}

			void close() {
				try {
					this.connection.close();
				}
				catch (IOException ex) {
					// closing anyway
				}
			}

		}

	}

	/** Several replies to one command, as {@code SUBSCRIBE} gives one per channel. */
	private record Pushes(List<Object> replies) {
	}

	/** A command: an array of bulk strings, or an inline command. */
	private static @Nullable List<byte[]> readCommand(InputStream in) throws IOException {
		int first = in.read();
		if (first < 0) {
			return null;
		}
		if (first != '*') {
			String inline = (char) first + readLine(in);
			List<byte[]> words = new ArrayList<>();
			for (String word : inline.trim().split("\\s+")) {
				words.add(bytes(word));
			}
			return words.isEmpty() || words.get(0).length == 0 ? readCommand(in) : words;
		}
		int count = Integer.parseInt(readLine(in));
		List<byte[]> args = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			if (in.read() != '$') {
				throw new IOException("expected a bulk string");
			}
			int length = Integer.parseInt(readLine(in));
			byte[] arg = in.readNBytes(length);
			if (arg.length < length) {
				throw new EOFException();
			}
			readLine(in);
			args.add(arg);
		}
		return args.isEmpty() ? readCommand(in) : args;
	}

	private static String readLine(InputStream in) throws IOException {
		ByteArrayOutputStream line = new ByteArrayOutputStream();
		while (true) {
			int b = in.read();
			if (b < 0) {
				throw new EOFException();
			}
			if (b == '\r') {
				in.read();
				return line.toString(StandardCharsets.ISO_8859_1);
			}
			line.write(b);
		}
	}

	private static void write(OutputStream out, @Nullable Object reply) throws IOException {
		if (reply == null) {
			out.write(bytes("$-1\r\n"));
		}
		else if (reply instanceof Pushes pushes) {
			for (Object push : pushes.replies()) {
				write(out, push);
			}
		}
		else if (reply instanceof StatusReply status) {
			out.write(bytes("+" + status.text() + "\r\n"));
		}
		else if (reply instanceof ErrorReply error) {
			out.write(bytes("-" + error.message().replace('\r', ' ').replace('\n', ' ') + "\r\n"));
		}
		else if (reply instanceof Long number) {
			out.write(bytes(":" + number + "\r\n"));
		}
		else if (reply instanceof byte[] bulk) {
			out.write(bytes("$" + bulk.length + "\r\n"));
			out.write(bulk);
			out.write(bytes("\r\n"));
		}
		else {
			List<?> array = (List<?>) reply;
			out.write(bytes("*" + array.size() + "\r\n"));
			for (Object element : array) {
				write(out, element);
			}
		}
	}

	private static byte[] bytes(String text) {
		return InProcessKeyspace.bytes(text);
	}

}
