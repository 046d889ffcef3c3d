package dev.redlock.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Connections to one node.
 *
 * <p>
 * An idle connection is handed out at once. A new one is opened on this node's own
 * connector thread, so that a node that is slow to connect (frozen, or behind a dropped
 * route) cannot eat the time of a round that other nodes need: the round waits for the
 * connection only as long as its deadline allows, and a connection that arrives later is
 * kept for the next round, or handed to the next borrower. A connection given back while
 * others are being opened goes to the oldest borrower waiting for one. Each new
 * connection first {@link NodeGreeting greets} the server, whose {@code run_id} and
 * uptime feed the {@link NodeQuarantine restart quarantine}. After a failed connection
 * attempt the node is not tried again for {@link #reconnectBackoffNanos}, so a dead node
 * costs nothing and queues nothing. Broken connections are closed, not reused. The
 * connector thread exists only while connections are being opened.
 *
 * <p>
 * A warm pool keeps at least {@code minIdle} connections open: they are opened in the
 * background as soon as the pool is built, so that the first rounds of a service just
 * started find them ready, and again whenever connections were lost (a node that
 * restarted, a reset network), once the node can be reached. The first attempt's end,
 * whether it connected or not, is reported to the {@link WarmUp}.
 */
final class NodeConnectionPool implements AutoCloseable {

	/**
	 * How long an idle connection beyond those kept warm stays open unused: a burst's
	 * connections close once the work no longer needs them. A hundred node timeouts (10 s
	 * by default), between 1 s and 30 s.
	 */
	private final long idleTimeoutNanos;

	private final RedisNodeUri uri;

	private final HostAndPort hostAndPort;

	private final String clientName;

	private final int maxIdle;

	/** Connections kept open even when idle: at most {@link #maxIdle}. */
	private final int minIdle;

	/**
	 * Connections of this pool open now, idle, borrowed or being opened to keep
	 * {@link #minIdle}; the subscriber's own connection is not one of them.
	 */
	private final AtomicInteger openOrOpening = new AtomicInteger();

	/** Told when the warm-up ends here; {@code null} once told. */
	private volatile @Nullable WarmUp warmUp;

	/** Connections opened to be kept, while the warm-up lasts. */
	private final AtomicInteger warmOpened = new AtomicInteger();

	private final long reconnectBackoffNanos;

	private final NodeQuarantine quarantine;

	private final Semaphore permits;

	private final int maxTotal;

	/**
	 * Idle connections, the most recently used first (its socket is the likeliest to be
	 * alive); guarded by itself.
	 */
	private final ArrayDeque<PipelinedConnection> idle = new ArrayDeque<>();

	private final ThreadPoolExecutor connector;

	private volatile long downUntilNanos;

	/**
	 * How long the node takes to answer, from the moment a command is written until its
	 * reply is read: a moving average, first taken from the {@code INFO} of each new
	 * connection, so that a node is measured even when rounds stop waiting for it.
	 */
	private volatile long latencyNanos;

	/**
	 * Borrowers waiting for a free slot, oldest first: a free slot goes to them before
	 * anyone else.
	 */
	private final ConcurrentLinkedQueue<PermitWaiter> permitWaiters = new ConcurrentLinkedQueue<>();

	/**
	 * Borrowers whose connection is being opened, oldest first: a connection given back
	 * meanwhile goes to them, so that a burst of threads on a cold pool is served by the
	 * first connections as they come back rather than each waiting for its own to open.
	 */
	private final ConcurrentLinkedQueue<CompletableFuture<PipelinedConnection>> awaitingOpen = new ConcurrentLinkedQueue<>();

	/** Reads the replies rounds did not wait for, in the order the node answers. */
	private final OnDemandThread lateReplies;

	private volatile @Nullable RuntimeException lastConnectFailure;

	private volatile boolean closed;

	private final TlsSettings tls;

	NodeConnectionPool(RedisNodeUri uri, RedlockSettings settings, long reconnectBackoffNanos,
			NodeQuarantine quarantine, TlsSettings tls, WarmUp warmUp) {
		this(uri, settings.poolMaxTotal(), settings.poolMaxIdle(),
				Math.min(settings.poolMinIdle(), settings.poolMaxIdle()), settings.clientName(), reconnectBackoffNanos,
				quarantine, tls, warmUp, Math.min(TimeUnit.SECONDS.toNanos(30),
						Math.max(TimeUnit.SECONDS.toNanos(1), 100 * settings.nodeTimeout().toNanos())));
	}

	private NodeConnectionPool(RedisNodeUri uri, int maxTotal, int maxIdle, int minIdle, String clientName,
			long reconnectBackoffNanos, NodeQuarantine quarantine, TlsSettings tls, WarmUp warmUp,
			long idleTimeoutNanos) {
		this.uri = uri;
		this.idleTimeoutNanos = idleTimeoutNanos;
		this.tls = tls;
		this.quarantine = quarantine;
		this.hostAndPort = new HostAndPort(uri.host(), uri.port());
		this.clientName = clientName;
		this.maxIdle = maxIdle;
		this.minIdle = minIdle;
		this.warmUp = (minIdle > 0) ? warmUp : null;
		this.reconnectBackoffNanos = reconnectBackoffNanos;
		this.permits = new Semaphore(maxTotal);
		this.maxTotal = maxTotal;
		this.downUntilNanos = System.nanoTime();
		this.connector = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), (task) -> {
			Thread thread = new Thread(task, "redlock-connect-" + uri.hostAndPort());
			thread.setDaemon(true);
			return thread;
		});
		this.connector.allowCoreThreadTimeOut(true);
		this.lateReplies = new OnDemandThread(OnDemandThread.LATE_REPLIES + uri.hostAndPort());
		quarantine.markers().repairWith(this::repairMarker);
	}

	/**
	 * Opens a connection in the background, whose greeting writes the node's marker anew:
	 * a round found it gone.
	 */
	private void repairMarker() {
		try {
			this.connector.execute(() -> {
				try {
					if (!this.closed && downFailure() == null) {
						PipelinedConnection connection = connectAndGreet(WarmUp.CONNECT_TIMEOUT_MILLIS);
						this.openOrOpening.incrementAndGet();
						keep(connection);
					}
				}
				catch (RuntimeException ex) {
					failedToConnect(ex);
				}
				finally {
					this.quarantine.markers().repairEnded();
				}
			});
		}
		catch (RejectedExecutionException ex) {
			this.quarantine.markers().repairEnded();
		}
	}

	/**
	 * Starts opening the connections that are kept even when idle, in the background.
	 */
	void warmUp() {
		keepMinIdle();
	}

	/**
	 * Opens connections in the background until {@link #minIdle} are open or being
	 * opened; nothing while the node is left alone after a failed attempt (the next
	 * connection that opens calls this again).
	 */
	private void keepMinIdle() {
		while (!this.closed) {
			int open = this.openOrOpening.get();
			if (open >= this.minIdle) {
				return;
			}
			if (downFailure() != null) {
				warmUpEnded(false);
				return;
			}
			if (this.openOrOpening.compareAndSet(open, open + 1)) {
				try {
					this.connector.execute(this::openToKeep);
				}
				catch (RejectedExecutionException ex) {
					this.openOrOpening.decrementAndGet();
					return;
				}
			}
		}
	}

	/**
	 * Opens a connection for no borrower in particular: it goes to a borrower waiting for
	 * one to open, else it is kept idle.
	 */
	private void openToKeep() {
		boolean opened = false;
		try {
			if (this.closed || downFailure() != null) {
				return;
			}
			PipelinedConnection connection = connectAndGreet(WarmUp.CONNECT_TIMEOUT_MILLIS);
			// counted already: open() would count it again
			opened = true;
			keep(connection);
		}
		catch (RuntimeException ex) {
			failedToConnect(ex);
		}
		finally {
			if (!opened) {
				this.openOrOpening.decrementAndGet();
				warmUpEnded(false);
			}
			else if (this.warmOpened.incrementAndGet() >= this.minIdle) {
				warmUpEnded(true);
			}
		}
	}

	/**
	 * Tells the warm-up, once, how it ended here: every connection kept warm opened, or
	 * an attempt failed.
	 */
	private void warmUpEnded(boolean opened) {
		WarmUp told = this.warmUp;
		if (told != null) {
			this.warmUp = null;
			told.nodeDone(opened);
		}
	}

	/**
	 * Keeps a connection that holds no slot: handed to a borrower waiting for one to open
	 * (with a slot taken for it), else idle.
	 */
	private void keep(PipelinedConnection connection) {
		if (this.permits.tryAcquire()) {
			giveBack(connection);
			return;
		}
		boolean kept = false;
		synchronized (this.idle) {
			if (!this.closed && this.idle.size() < this.maxIdle) {
				connection.idleSince = System.nanoTime();
				this.idle.offerFirst(connection);
				kept = true;
			}
		}
		if (!kept) {
			discard(connection);
		}
	}

	/**
	 * Returns the node this pool connects to.
	 * @return its address and credentials
	 */
	RedisNodeUri uri() {
		return this.uri;
	}

	/**
	 * Borrows a connection without blocking: an idle one at once, else one being opened
	 * in the background, or, when every slot is taken, the first one given back. A caller
	 * that stops waiting cancels the future; a connection that arrives after that is kept
	 * for later.
	 * @param timeoutMillis the time the caller has left, at least 1: the bound for
	 * connecting
	 * @return the connection, to be given back with {@link #giveBack}; failed with a
	 * {@link JedisConnectionException} if none can be had, or an
	 * {@link AuthenticationFailedException} if the node refused our credentials
	 */
	CompletableFuture<PipelinedConnection> borrow(int timeoutMillis) {
		if (this.closed) {
			return CompletableFuture.failedFuture(new JedisConnectionException("Redlock has been closed"));
		}
		JedisConnectionException down = downFailure();
		if (down != null) {
			return CompletableFuture.failedFuture(down);
		}
		if (this.permits.tryAcquire()) {
			return withPermit(timeoutMillis);
		}
		PermitWaiter waiter = new PermitWaiter(new CompletableFuture<>(), timeoutMillis);
		this.permitWaiters.add(waiter);
		handOverFreePermits();
		return waiter.connection();
	}

	/** An idle connection or a new one, for a caller that holds a permit. */
	private CompletableFuture<PipelinedConnection> withPermit(int timeoutMillis) {
		PipelinedConnection connection = pollIdle();
		return (connection != null) ? CompletableFuture.completedFuture(connection) : openInBackground(timeoutMillis);
	}

	/**
	 * Gives free slots to the borrowers waiting for one, oldest first; skips those that
	 * stopped waiting.
	 */
	private void handOverFreePermits() {
		while (!this.permitWaiters.isEmpty() && this.permits.tryAcquire()) {
			PermitWaiter waiter = this.permitWaiters.poll();
			if (waiter == null || waiter.connection().isDone()) {
				this.permits.release();
				continue;
			}
			withPermit(waiter.timeoutMillis()).whenComplete((connection, failure) -> {
				if (failure != null) {
					waiter.connection().completeExceptionally(failure);
				}
				else if (!waiter.connection().complete(connection)) {
					giveBack(connection);
				}
			});
		}
	}

	/** A borrower waiting for a free slot. */
	private record PermitWaiter(CompletableFuture<PipelinedConnection> connection, int timeoutMillis) {
	}

	/**
	 * Borrows an idle connection if there is one and a slot is free now, without waiting
	 * or allocating: the path of almost every round.
	 * @return the connection, to be given back with {@link #giveBack}, or {@code null}
	 * (then use {@link #borrow})
	 */
	@Nullable PipelinedConnection borrowIdle() {
		if (this.closed || !this.permits.tryAcquire()) {
			return null;
		}
		PipelinedConnection connection = pollIdle();
		if (connection == null) {
			this.permits.release();
		}
		return connection;
	}

	/**
	 * Takes the most recent usable idle connection, closing broken ones on the way; the
	 * caller holds a permit.
	 */
	private @Nullable PipelinedConnection pollIdle() {
		while (true) {
			PipelinedConnection connection;
			synchronized (this.idle) {
				connection = this.idle.pollFirst();
			}
			if (connection == null || (connection.isReusable() && connection.isConnected())) {
				return connection;
			}
			discard(connection);
		}
	}

	private CompletableFuture<PipelinedConnection> openInBackground(int timeoutMillis) {
		CompletableFuture<PipelinedConnection> result = new CompletableFuture<>();
		// a borrower served by a connection given back meanwhile leaves the queue then;
		// every other one when its own attempt ends, so that a node down for good queues
		// nothing
		this.awaitingOpen.add(result);
		try {
			this.connector.execute(() -> {
				try {
					JedisConnectionException down = this.closed
							? new JedisConnectionException("Redlock has been closed") : downFailure();
					if (down != null) {
						this.permits.release();
						result.completeExceptionally(down);
						return;
					}
					try {
						PipelinedConnection connection = open(timeoutMillis);
						if (!result.complete(connection)) {
							// the borrower stopped waiting, or was served already: keep
							// it
							giveBack(connection);
						}
					}
					catch (RuntimeException ex) {
						failedToConnect(ex);
						this.permits.release();
						result.completeExceptionally(ex);
					}
				}
				finally {
					this.awaitingOpen.remove(result);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			this.awaitingOpen.remove(result);
			this.permits.release();
			result.completeExceptionally(new JedisConnectionException("Redlock has been closed", ex));
		}
		return result;
	}

	/** Leaves the node alone for the back-off after a failed connection attempt. */
	private void failedToConnect(RuntimeException ex) {
		this.lastConnectFailure = ex;
		this.downUntilNanos = System.nanoTime() + this.reconnectBackoffNanos;
	}

	private @Nullable JedisConnectionException downFailure() {
		long left = this.downUntilNanos - System.nanoTime();
		if (left <= 0) {
			return null;
		}
		RuntimeException last = this.lastConnectFailure;
		String message = "not retried for another " + TimeUnit.NANOSECONDS.toMillis(left)
				+ " ms after a failed connection attempt: "
				+ ((last != null && last.getMessage() != null) ? last.getMessage() : String.valueOf(last));
		// the cause tells a node that timed out (frozen) from one that refused the
		// connection
		return (last instanceof AuthenticationFailedException) ? new AuthenticationFailedException(message, last)
				: new JedisConnectionException(message, last);
	}

	/**
	 * Notes how long the node took to answer a command, timeouts included.
	 * @param nanos from the moment the command was written until its reply was read (or
	 * the read gave up)
	 */
	void replied(long nanos) {
		long average = this.latencyNanos;
		this.latencyNanos = (average == 0) ? Math.max(1, nanos) : Math.max(1, (average + nanos) / 2);
	}

	/**
	 * Returns how long the node is expected to take to answer a command.
	 * @return nanoseconds from writing the command to reading its reply; 0 before any was
	 * measured
	 */
	long expectedLatencyNanos() {
		return this.latencyNanos;
	}

	/**
	 * Runs a task on this node's late-reply thread, which reads the replies rounds did
	 * not wait for.
	 * @param task reads the replies and gives the connection back
	 * @param whenClosed what to do instead once closed (on the calling thread)
	 */
	void readLate(Runnable task, Runnable whenClosed) {
		this.lateReplies.execute(task, whenClosed);
	}

	/**
	 * Returns a borrowed connection; broken ones, those that still owe a reply (the next
	 * user would read it as its own) and those beyond the idle limit are closed.
	 * @param connection the connection from {@link #borrow}
	 */
	void giveBack(PipelinedConnection connection) {
		if (!this.awaitingOpen.isEmpty() && !this.closed && connection.isReusable() && connection.isConnected()
				&& handToAwaitingOpen(connection)) {
			// its slot goes with it; the borrower's own slot is freed when the connection
			// opened for it is given back in turn
			return;
		}
		try {
			boolean kept = false;
			PipelinedConnection unused = null;
			if (!this.closed && connection.isReusable()) {
				long now = System.nanoTime();
				synchronized (this.idle) {
					if (this.idle.size() < this.maxIdle) {
						connection.idleSince = now;
						this.idle.offerFirst(connection);
						kept = true;
					}
					// the least recently used, unused for a while: connections follow the
					// work, down to those kept warm
					PipelinedConnection oldest = this.idle.peekLast();
					if (this.idle.size() > this.minIdle && oldest != null
							&& now - oldest.idleSince > this.idleTimeoutNanos) {
						unused = this.idle.pollLast();
					}
				}
			}
			if (!kept) {
				discard(connection);
			}
			if (unused != null) {
				discard(unused);
			}
			else if (this.closed) {
				// closed meanwhile: close() may have emptied the idle list before this
				// connection was added
				discardIdle();
			}
		}
		finally {
			this.permits.release();
			if (!this.permitWaiters.isEmpty()) {
				handOverFreePermits();
			}
		}
	}

	/** Hands a connection to the oldest borrower still waiting for one to open. */
	private boolean handToAwaitingOpen(PipelinedConnection connection) {
		for (CompletableFuture<PipelinedConnection> awaiting = this.awaitingOpen
			.poll(); awaiting != null; awaiting = this.awaitingOpen.poll()) {
			if (awaiting.complete(connection)) {
				return true;
			}
		}
		return false;
	}

	/** Opens a connection for a borrower, counting it. */
	private PipelinedConnection open(int timeoutMillis) {
		PipelinedConnection connection = connectAndGreet(timeoutMillis);
		int open = this.openOrOpening.incrementAndGet();
		if (open < this.minIdle) {
			// the node answers again after connections were lost: refill the warm ones
			keepMinIdle();
		}
		return connection;
	}

	private PipelinedConnection connectAndGreet(int timeoutMillis) {
		PipelinedConnection connection = connect(timeoutMillis);
		try {
			NodeGreeting.exchange(connection, this::replied, this.quarantine);
		}
		catch (RuntimeException ex) {
			closeQuietly(connection);
			throw ex;
		}
		return connection;
	}

	/**
	 * Opens a connection of its own, outside the pool, with this node's credentials and
	 * TLS settings: for a subscriber, which keeps it for as long as it listens.
	 * @param timeoutMillis the bound for connecting and for each read
	 * @return the connection, authenticated
	 * @throws AuthenticationFailedException if the node refused our credentials
	 */
	PipelinedConnection connect(int timeoutMillis) {
		try {
			return new PipelinedConnection(this.hostAndPort,
					this.uri.clientConfig(timeoutMillis, this.clientName, this.tls));
		}
		catch (JedisDataException ex) {
			// AUTH, HELLO, SELECT or CLIENT SETNAME refused: a wrong password or user,
			// not a node that is down
			throw new AuthenticationFailedException("authentication failed: " + ex.getMessage(), ex);
		}
	}

	/** How many connections are borrowed now: in a round, or waiting for late replies. */
	int connectionsInUse() {
		return this.maxTotal - this.permits.availablePermits();
	}

	/** How many borrowers wait for a connection being opened, for tests. */
	int awaitingOpen() {
		return this.awaitingOpen.size();
	}

	/** How many idle connections are kept now. */
	int idleCount() {
		synchronized (this.idle) {
			return this.idle.size();
		}
	}

	/**
	 * Closes every idle connection.
	 */
	void discardIdle() {
		List<PipelinedConnection> discarded;
		synchronized (this.idle) {
			discarded = new ArrayList<>(this.idle);
			this.idle.clear();
		}
		discarded.forEach(this::discard);
	}

	/**
	 * Closes a connection of this pool for good; when fewer than {@link #minIdle} are
	 * left, others are opened in the background.
	 */
	private void discard(PipelinedConnection connection) {
		closeQuietly(connection);
		if (this.openOrOpening.decrementAndGet() < this.minIdle) {
			keepMinIdle();
		}
	}

	/** How many connections of this pool are open or being opened to be kept. */
	int openConnections() {
		return this.openOrOpening.get();
	}

	@Override
	public void close() {
		this.closed = true;
		// queued connection attempts still run: each sees the pool closed and gives its
		// slot back
		this.connector.shutdown();
		this.lateReplies.close();
		warmUpEnded(false);
		discardIdle();
		for (PermitWaiter waiter = this.permitWaiters.poll(); waiter != null; waiter = this.permitWaiters.poll()) {
			waiter.connection().completeExceptionally(new JedisConnectionException("Redlock has been closed"));
		}
	}

	static void closeQuietly(PipelinedConnection connection) {
		try {
			connection.close();
		}
		catch (RuntimeException ex) {
			// closing a socket that is already broken has nothing more to tell
		}
	}

}
