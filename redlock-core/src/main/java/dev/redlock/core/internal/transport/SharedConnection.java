package dev.redlock.core.internal.transport;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * One connection to a node shared by every round: the calls of many callers go out in
 * batches ({@link WriteBatches}) that the connection's writer thread writes, and its
 * reader thread reads the replies in the order the calls were written, each by its own
 * {@link Call}, which hands it to its round. A caller neither writes nor reads, so it
 * waits for nobody's reply but its own, and only as long as its own deadline; a node that
 * stopped reading blocks the writer thread of its own connection alone. On a machine with
 * few cores the writer thread is what makes batches: the calls that callers encode while
 * it writes, or wakes, go out together in its next write, so the node reads many at once
 * (a caller writing its own call right away would write alone).
 *
 * <p>
 * A call whose reply has not come within the stall time (twice the node timeout) from its
 * write means the node stopped answering on this connection: it is closed, every call
 * still on it fails for this node alone, and the next call opens another. Twice: a reply
 * a little later than its round waits for is a slow node's, not a dead connection's, and
 * the calls of other rounds behind it may still be in time. While a connection is being
 * opened (on the pool's connector thread, within the reconnect back-off), calls wait for
 * it, and one whose round gave up meanwhile is not written.
 */
public final class SharedConnection implements AutoCloseable {

	/** Prefix of a reader thread's name, followed by its node's {@code host:port}. */
	public static final String READER = "redlock-reader-";

	/** Prefix of a writer thread's name, followed by its node's {@code host:port}. */
	public static final String WRITER = "redlock-writer-";

	private static final Logger logger = LoggerFactory.getLogger(SharedConnection.class);

	private final RedisNodeUri uri;

	/**
	 * Opens (and greets) a connection within a bound in milliseconds, in the background.
	 */
	private final IntFunction<CompletableFuture<PipelinedConnection>> opener;

	/**
	 * Whether a connection goes to the voter's master as it is now: one opened to a
	 * master the voter moved away from meanwhile is not used.
	 */
	private final Predicate<PipelinedConnection> current;

	private final long stallNanos;

	private final int connectMillis;

	private final Object lineLock = new Object();

	/** The open connection, or {@code null}. */
	private volatile @Nullable Line line;

	/**
	 * Calls waiting for a connection being opened, with their nodes; {@code null} while
	 * none is being opened.
	 */
	private @Nullable List<Waiting> awaitingLine;

	private volatile boolean closed;

	private final boolean everyRound;

	/**
	 * @param uri the node
	 * @param opener opens and greets a connection, within a bound in milliseconds, in the
	 * background (the node's pool, on its connector thread)
	 * @param stallNanos how long a reply may take before the connection counts as stalled
	 * @param connectMillis the bound for opening a connection
	 * @param everyRound whether every round goes over it, even one alone
	 */
	SharedConnection(RedisNodeUri uri, IntFunction<CompletableFuture<PipelinedConnection>> opener,
			Predicate<PipelinedConnection> current, long stallNanos, int connectMillis, boolean everyRound) {
		this.uri = uri;
		this.opener = opener;
		this.current = current;
		this.everyRound = everyRound;
		this.stallNanos = stallNanos;
		this.connectMillis = connectMillis;
	}

	/**
	 * A call on the shared connection, with the round it belongs to.
	 */
	public interface Call {

		/**
		 * Buffers the call's commands; the connection's write lock is held.
		 * @param node the node's index, as given to {@link #submit}
		 */
		void writeTo(int node, PipelinedConnection connection);

		/**
		 * Reads the call's replies, on the reader thread, and hands them to the round.
		 * @param node the node's index, as given to {@link #submit}
		 * @throws JedisConnectionException if the connection broke or stalled (then
		 * {@link #failed} follows); nothing else may escape
		 */
		void readFrom(int node, PipelinedConnection connection);

		/**
		 * The call got no reply: it was not written (no connection could be had in time)
		 * or its connection broke or stalled first. Must not throw.
		 * @param written whether it had been written
		 */
		void failed(int node, JedisException failure, boolean written);

		/**
		 * By when the call must be written: one whose connection comes later fails
		 * instead, its round having given up on it.
		 * @return a {@link System#nanoTime()} reading
		 */
		long writeBy();

	}

	/**
	 * Writes a call, in the next batch; or, while no connection is open, opens one and
	 * writes it then. Never waits for a reply, nor for a connection being opened. Its
	 * reply or failure reaches the call.
	 * @param call the call
	 * @param node the node's index, handed back to the call
	 */
	public void submit(Call call, int node) {
		Line current = lineToTheMaster();
		if (current != null && current.write(call, node)) {
			return;
		}
		synchronized (this.lineLock) {
			current = this.line;
			if (current != null && current.write(call, node)) {
				return;
			}
			if (this.closed) {
				call.failed(node, new JedisConnectionException("Redlock has been closed"), false);
				return;
			}
			boolean opening = this.awaitingLine != null;
			if (!opening) {
				this.awaitingLine = new ArrayList<>();
			}
			this.awaitingLine.add(new Waiting(call, node));
			if (opening) {
				return;
			}
		}
		open();
	}

	/**
	 * Returns the open line, unless it goes to a master the voter has moved away from:
	 * that one is broken off here, since the move's own hook ({@link #masterMoved}) runs
	 * only after the new master is known, and a round that began meanwhile must not write
	 * to the former master, which may still grant locks until the sentinels demote it.
	 */
	private @Nullable Line lineToTheMaster() {
		Line current = this.line;
		if (current != null && !this.current.test(current.connection)) {
			current.breakOff(new JedisConnectionException("the voter's master moved"));
			return null;
		}
		return current;
	}

	/** Starts opening a connection, if none is open or being opened. */
	public void openSoon() {
		synchronized (this.lineLock) {
			if (this.closed || this.awaitingLine != null || (this.line != null && !this.line.broken)) {
				return;
			}
			this.awaitingLine = new ArrayList<>();
		}
		open();
	}

	private void open() {
		this.opener.apply(this.connectMillis).whenComplete(this::opened);
	}

	/**
	 * The connection was opened, or could not be: the calls waiting for it are written
	 * (those still in time) or failed.
	 */
	private void opened(@Nullable PipelinedConnection connection, @Nullable Throwable failure) {
		List<Waiting> waiting;
		Line opened = null;
		JedisException failed = (failure != null) ? asJedisException(failure) : null;
		synchronized (this.lineLock) {
			waiting = (this.awaitingLine != null) ? this.awaitingLine : List.of();
			this.awaitingLine = null;
			if (connection != null) {
				if (this.closed) {
					failed = new JedisConnectionException("Redlock has been closed");
				}
				else if (!this.current.test(connection)) {
					// checked under the lock that masterMoved() reads the line under
					failed = new JedisConnectionException("the voter's master moved");
				}
				else {
					try {
						opened = new Line(connection);
					}
					catch (IOException | RuntimeException ex) {
						failed = asJedisException(ex);
					}
				}
				if (opened == null) {
					connection.abort();
				}
			}
			if (opened != null) {
				// written before the connection is published, so a round's follow-up
				// never overtakes the call it follows
				for (Waiting call : waiting) {
					if (System.nanoTime() - call.call().writeBy() > 0) {
						call.call()
							.failed(call.node(), NodeLeftOutException
								.asTimedOut("not written: connecting took longer than the node timeout"), false);
					}
					else if (!opened.write(call.call(), call.node())) {
						call.call().failed(call.node(), new JedisConnectionException("the connection broke"), false);
					}
				}
				waiting = List.of();
				this.line = opened;
				opened.start();
			}
		}
		if (failed != null) {
			for (Waiting call : waiting) {
				call.call().failed(call.node(), failed, false);
			}
		}
	}

	private static JedisException asJedisException(Throwable failure) {
		Throwable cause = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
				: failure;
		return (cause instanceof JedisException jedis) ? jedis : new JedisConnectionException(cause);
	}

	/**
	 * Whether every round goes over this connection, even one that no other round runs
	 * beside ({@link dev.redlock.core.RedlockSettings.Transport#SHARED}).
	 */
	public boolean takesEveryRound() {
		return this.everyRound;
	}

	/** Whether a connection is open. */
	boolean isOpen() {
		Line current = this.line;
		return current != null && !current.broken;
	}

	/**
	 * Closes the connection: the calls on it fail, and later calls fail at once.
	 */
	@Override
	public void close() {
		List<Waiting> waiting;
		synchronized (this.lineLock) {
			this.closed = true;
			waiting = this.awaitingLine;
			this.awaitingLine = null;
		}
		Line current = this.line;
		if (current != null) {
			current.breakOff(new JedisConnectionException("Redlock has been closed"));
		}
		if (waiting != null) {
			for (Waiting call : waiting) {
				call.call().failed(call.node(), new JedisConnectionException("Redlock has been closed"), false);
			}
		}
	}

	/**
	 * The voter's master moved: the connection to the former one is broken off (its calls
	 * fail), and the next call opens one to the new master. One already opened to the new
	 * master, by a call that came first, is kept.
	 */
	void masterMoved() {
		Line current;
		synchronized (this.lineLock) {
			current = this.line;
		}
		if (current != null && !this.current.test(current.connection)) {
			current.breakOff(new JedisConnectionException("the voter's master moved"));
		}
	}

	/** A call waiting for a connection to be opened. */
	private record Waiting(Call call, int node) {
	}

	/**
	 * One open connection: its write batches and the thread that writes them, the calls
	 * written whose reply is still to read (in order, with their nodes and write times),
	 * and the thread that reads them.
	 */
	private final class Line {

		private final PipelinedConnection connection;

		private final WriteBatches batches;

		private final Thread reader;

		private final Thread writer;

		/** Whether the writer waits for a batch: it is then woken by the next caller. */
		private final AtomicBoolean writerIdle = new AtomicBoolean();

		/** The calls awaiting a reply, oldest at {@link #head}: guarded by this line. */
		private Call[] calls = new Call[16];

		private int[] nodes = new int[16];

		/** When each call was recorded, just before it was encoded and written. */
		private long[] writtenAt = new long[16];

		private int head;

		private int size;

		/** Whether the reader waits for a call to be written: guarded by this line. */
		private boolean readerIdle;

		/** Whether it broke: guarded by this line, read without it as a hint. */
		private volatile boolean broken;

		/** Encoding is done under this lock, the bookkeeping of calls under the line. */
		private final Object writeLock = new Object();

		Line(PipelinedConnection connection) throws IOException {
			this.connection = connection;
			this.batches = connection.share();
			this.reader = new Thread(this::read, READER + SharedConnection.this.uri.name());
			this.reader.setDaemon(true);
			this.writer = new Thread(this::writeBatches, WRITER + SharedConnection.this.uri.name());
			this.writer.setDaemon(true);
		}

		/** Starts its reader and writer threads. */
		void start() {
			this.reader.start();
			this.writer.start();
		}

		/**
		 * Encodes a call into the next batch, and wakes the writer if it waits.
		 * @return {@code false} if this connection broke before (nothing was written)
		 */
		boolean write(Call call, int node) {
			if (this.broken) {
				return false;
			}
			boolean wake;
			RuntimeException encodingFailed = null;
			synchronized (this.writeLock) {
				synchronized (this) {
					if (this.broken) {
						return false;
					}
					// recorded before the bytes exist, so the reader knows what it reads
					record(call, node);
					wake = this.readerIdle;
					this.readerIdle = false;
				}
				try {
					call.writeTo(node, this.connection);
					this.batches.commandsEnded();
				}
				catch (RuntimeException ex) {
					encodingFailed = ex;
				}
			}
			if (encodingFailed != null) {
				// outside the write lock: breaking off takes the connection's own lock
				breakOff(asJedisException(encodingFailed));
				return true;
			}
			if (wake) {
				LockSupport.unpark(this.reader);
			}
			if (this.writerIdle.compareAndSet(true, false)) {
				LockSupport.unpark(this.writer);
			}
			return true;
		}

		/**
		 * The writer thread: writes what callers batched, one socket write per batch,
		 * until the line breaks. Callers never write, so a node that stopped reading
		 * blocks nobody's call but its own connection's; and while the writer writes, or
		 * wakes, the calls of other callers join the next batch.
		 */
		private void writeBatches() {
			while (!this.broken) {
				if (this.batches.isFilled()) {
					try {
						this.batches.writeOut(this.writeLock);
					}
					catch (IOException ex) {
						breakOff(new JedisConnectionException(ex));
						return;
					}
					catch (Throwable ex) {
						// a writer gone silently would leave its calls to the stall time
						breakOffUnexpectedly("Writing to", ex);
						return;
					}
					continue;
				}
				this.writerIdle.set(true);
				// looked at again after saying so: a caller that filled the batch before
				// saw the writer busy and woke nobody
				if (!this.batches.isFilled() && !this.broken) {
					LockSupport.park(this);
					// nothing here answers an interrupt: a flag left set would end every
					// park at once
					Thread.interrupted();
				}
				this.writerIdle.set(false);
			}
		}

		/** Records a call about to be written. */
		private void record(Call call, int node) {
			if (this.size == this.calls.length) {
				grow();
			}
			int tail = (this.head + this.size) % this.calls.length;
			this.calls[tail] = call;
			this.nodes[tail] = node;
			this.writtenAt[tail] = System.nanoTime();
			this.size++;
		}

		private void grow() {
			Call[] calls = new Call[this.calls.length * 2];
			int[] nodes = new int[calls.length];
			long[] writtenAt = new long[calls.length];
			for (int i = 0; i < this.size; i++) {
				int from = (this.head + i) % this.calls.length;
				calls[i] = this.calls[from];
				nodes[i] = this.nodes[from];
				writtenAt[i] = this.writtenAt[from];
			}
			this.calls = calls;
			this.nodes = nodes;
			this.writtenAt = writtenAt;
			this.head = 0;
		}

		/**
		 * The reader thread: reads each call's replies in order until the line breaks.
		 */
		private void read() {
			while (true) {
				Call call;
				int node;
				long stallAt;
				synchronized (this) {
					if (this.broken) {
						return;
					}
					if (this.size == 0) {
						this.readerIdle = true;
						call = null;
						node = -1;
						stallAt = 0;
					}
					else {
						call = this.calls[this.head];
						node = this.nodes[this.head];
						stallAt = this.writtenAt[this.head] + SharedConnection.this.stallNanos;
					}
				}
				if (call == null) {
					LockSupport.park(this);
					continue;
				}
				try {
					this.connection.readBy(stallAt);
					call.readFrom(node, this.connection);
				}
				catch (JedisConnectionException ex) {
					breakOff(stalled(ex));
					return;
				}
				catch (Throwable ex) {
					breakOffUnexpectedly("Reading a reply on", ex);
					return;
				}
				synchronized (this) {
					if (this.size > 0 && this.calls[this.head] == call) {
						this.calls[this.head] = null;
						this.head = (this.head + 1) % this.calls.length;
						this.size--;
					}
				}
			}
		}

		/**
		 * Breaks the connection off after a failure nothing expected, logged: its reader
		 * or writer thread ends.
		 * @param doing what failed, before "the shared connection to ..."
		 */
		private void breakOffUnexpectedly(String doing, Throwable failure) {
			logger.warn("{} the shared connection to {} failed", doing, SharedConnection.this.uri.redacted(), failure);
			breakOff(new JedisConnectionException(failure));
		}

		/** A timed-out read says the node stalled, not merely that it was slow. */
		private JedisConnectionException stalled(JedisConnectionException ex) {
			for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
				if (cause instanceof SocketTimeoutException) {
					return new JedisConnectionException(
							"the node did not answer on its shared connection within twice the node timeout", ex);
				}
			}
			return ex;
		}

		/**
		 * Breaks the connection off: closed at once, every call on it failed, its reader
		 * ended; the next call opens another.
		 */
		void breakOff(JedisException failure) {
			Call[] failedCalls;
			int[] failedNodes;
			synchronized (this) {
				if (this.broken) {
					return;
				}
				this.broken = true;
				failedCalls = new Call[this.size];
				failedNodes = new int[this.size];
				for (int i = 0; i < this.size; i++) {
					int at = (this.head + i) % this.calls.length;
					failedCalls[i] = this.calls[at];
					failedNodes[i] = this.nodes[at];
					this.calls[at] = null;
				}
				this.size = 0;
			}
			SharedConnection.this.lineBroke(this);
			this.connection.abort();
			LockSupport.unpark(this.reader);
			LockSupport.unpark(this.writer);
			for (int i = 0; i < failedCalls.length; i++) {
				try {
					failedCalls[i].failed(failedNodes[i], failure, true);
				}
				catch (Throwable ex) {
					logger.warn("A round failed to take a failure on the shared connection to {}",
							SharedConnection.this.uri.redacted(), ex);
				}
			}
		}

	}

	private void lineBroke(Line broken) {
		synchronized (this.lineLock) {
			if (this.line == broken) {
				this.line = null;
			}
		}
	}

}
