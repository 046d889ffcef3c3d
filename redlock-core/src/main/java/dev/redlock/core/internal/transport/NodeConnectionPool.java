package dev.redlock.core.internal.transport;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.RedlockSettings;
import dev.redlock.core.TlsSettings;
import dev.redlock.core.internal.thread.OnDemandThread;
import redis.clients.jedis.exceptions.JedisConnectionException;

/**
 * Connections to one node.
 *
 * <p>
 * An idle connection is handed out at once (see {@link IdleConnections}). A new one is
 * opened on this node's own connector thread ({@link NodeConnector}), so that a node that
 * is slow to connect (frozen, or behind a dropped route) cannot eat the time of a round
 * that other nodes need: the round waits for the connection only as long as its deadline
 * allows, and a connection that arrives later is kept for the next round, or handed to
 * the next borrower. A connection given back while others are being opened goes to the
 * oldest borrower waiting for one. Each new connection first {@link NodeGreeting greets}
 * the server, and a {@link GreetingListener} hears what it says about itself. After a
 * failed connection attempt the node is not tried again for a back-off, so a dead node
 * costs nothing and queues nothing. Broken connections are closed, not reused.
 *
 * <p>
 * A warm pool keeps at least {@code minIdle} connections open ({@link WarmConnections}).
 * When a Sentinel voter's master moves, {@link MasterMoves} closes the connections to the
 * former one.
 */
public final class NodeConnectionPool implements AutoCloseable {

	private final RedisNodeUri uri;

	private final Semaphore permits;

	private final int maxTotal;

	private final IdleConnections idle;

	private final NodeConnector connector;

	private final WarmConnections warm;

	/** How long the node takes to answer. */
	private final NodeLatency latency = new NodeLatency();

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

	/** The connection rounds share, with the pipelined transport; else {@code null}. */
	private final @Nullable SharedConnection shared;

	/** What a move of the voter's master does to this node's connections. */
	private final MasterMoves master;

	private volatile boolean closed;

	public NodeConnectionPool(RedisNodeUri uri, RedlockSettings settings, long reconnectBackoffNanos,
			GreetingListener greeting, TlsSettings tls, WarmUp warmUp) {
		this.uri = uri;
		int minIdle = Math.min(settings.poolMinIdle(), settings.poolMaxIdle());
		this.idle = new IdleConnections(settings.poolMaxIdle(), minIdle, idleTimeoutNanos(settings));
		this.maxTotal = settings.poolMaxTotal();
		this.permits = new Semaphore(this.maxTotal);
		this.connector = new NodeConnector(uri, settings.clientName(), tls, greeting, reconnectBackoffNanos,
				(int) Math.max(WarmUp.CONNECT_TIMEOUT_MILLIS, settings.nodeTimeout().toMillis()));
		this.lateReplies = new OnDemandThread(OnDemandThread.LATE_REPLIES + uri.name());
		this.shared = (settings.transport() == RedlockSettings.Transport.POOLED) ? null
				: new SharedConnection(uri, this::openShared, this.connector::isCurrent,
						2 * settings.nodeTimeout().toNanos(),
						(int) Math.max(WarmUp.CONNECT_TIMEOUT_MILLIS, settings.nodeTimeout().toMillis()),
						settings.transport() == RedlockSettings.Transport.SHARED);
		this.master = new MasterMoves(uri, this.connector, this.idle, this.shared, this::idleConnectionAborted);
		// last: from now on a marker repair may open a connection for this pool
		this.warm = new WarmConnections(this.connector, minIdle, warmUp, (nanos) -> this.latency.replied(nanos, false),
				this::keep, () -> this.closed);
	}

	/**
	 * How long a node whose connection attempt failed is left alone: long enough that a
	 * dead node costs nothing, short enough that a restarted one is back within a few
	 * retries.
	 */
	public static Duration reconnectBackoff(RedlockSettings settings) {
		Duration fourTimeouts = settings.nodeTimeout().multipliedBy(4);
		Duration floor = Duration.ofMillis(250);
		return (fourTimeouts.compareTo(floor) > 0) ? fourTimeouts : floor;
	}

	/**
	 * How long an idle connection beyond those kept warm stays open unused: a burst's
	 * connections close once the work no longer needs them. A hundred node timeouts (10 s
	 * by default), between 1 s and 30 s.
	 */
	private static long idleTimeoutNanos(RedlockSettings settings) {
		return Math.min(TimeUnit.SECONDS.toNanos(30),
				Math.max(TimeUnit.SECONDS.toNanos(1), 100 * settings.nodeTimeout().toNanos()));
	}

	/**
	 * Starts opening the connections that are kept even when idle, in the background.
	 */
	public void warmUp() {
		this.connector.startFollowing();
		boolean sharedFirst = this.shared != null && this.shared.takesEveryRound();
		if (sharedFirst && this.warm.keepsAny()) {
			// ahead of the warm connections on the connector thread: every round needs it
			this.shared.openSoon();
		}
		this.warm.start();
		if (this.shared != null && !sharedFirst && this.warm.keepsAny()) {
			// opened with the warm connections; without them, on demand too
			this.shared.openSoon();
		}
	}

	/**
	 * Returns the connection rounds share, with the pipelined transport.
	 * @return the shared connection, or {@code null} when rounds borrow connections
	 */
	public @Nullable SharedConnection shared() {
		return this.shared;
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
		keepIdle(connection);
	}

	/**
	 * Keeps a connection idle if there is room, and closes the one the idle list lets go
	 * of (this one, or one unused for the idle timeout).
	 */
	private void keepIdle(PipelinedConnection connection) {
		PipelinedConnection letGo = this.closed ? connection : this.idle.offer(connection, System.nanoTime());
		if (letGo != null) {
			discard(letGo);
		}
		if (letGo != connection && this.closed) {
			// closed meanwhile: close() may have emptied the idle list before this
			// connection was added
			discardIdle();
		}
	}

	/**
	 * Returns the node this pool connects to.
	 * @return its address and credentials
	 */
	public RedisNodeUri uri() {
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
	public CompletableFuture<PipelinedConnection> borrow(int timeoutMillis) {
		if (this.closed) {
			return CompletableFuture.failedFuture(new JedisConnectionException("Redlock has been closed"));
		}
		JedisConnectionException down = this.connector.downFailure();
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
	public @Nullable PipelinedConnection borrowIdle() {
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
			PipelinedConnection connection = this.idle.pollMostRecent();
			if (connection == null
					|| (connection.isReusable() && connection.isConnected() && this.connector.isCurrent(connection))) {
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
							? new JedisConnectionException("Redlock has been closed") : this.connector.downFailure();
					if (down != null) {
						this.permits.release();
						result.completeExceptionally(down);
						return;
					}
					try {
						PipelinedConnection connection = open(timeoutMillis);
						if (!this.connector.isCurrent(connection)) {
							// the voter's master moved while it was being opened
							connection.abort();
							this.permits.release();
							result.completeExceptionally(new JedisConnectionException("the voter's master moved"));
							return;
						}
						if (!result.complete(connection)) {
							// the borrower stopped waiting, or was served already: keep
							// it
							giveBack(connection);
						}
					}
					catch (RuntimeException ex) {
						this.connector.failed(ex);
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

	/** An idle connection to a former master was aborted: others may be opened warm. */
	private void idleConnectionAborted() {
		this.warm.closed();
	}

	/**
	 * Returns this node's connections as the voter's master moves: which still go to it,
	 * and who is told of a move.
	 */
	public MasterMoves master() {
		return this.master;
	}

	/**
	 * Returns how long the node takes to answer, as measured so far: each round and each
	 * new connection's greeting tell it.
	 */
	public NodeLatency latency() {
		return this.latency;
	}

	/**
	 * What the node runs a lock's compare-and-delete and compare-and-extend with, as its
	 * connections' greetings found.
	 */
	public NodeCommands commands() {
		return this.connector.commands();
	}

	/**
	 * Whether a borrow fails at once, a connection attempt having failed less than the
	 * reconnect back-off ago.
	 */
	public boolean isDown() {
		return this.connector.isDown();
	}

	/**
	 * Runs a task on this node's late-reply thread, which reads the replies rounds did
	 * not wait for.
	 * @param task reads the replies and gives the connection back
	 * @param whenClosed what to do instead once closed (on the calling thread)
	 */
	public void readLate(Runnable task, Runnable whenClosed) {
		this.lateReplies.execute(task, whenClosed);
	}

	/**
	 * Whether a task on this node's late-reply thread must not wait for a connection:
	 * every one is in use, and replies queued on that thread, most likely those they owe,
	 * are what gives them back.
	 */
	public boolean everyConnectionOwesLateReplies() {
		return this.permits.availablePermits() == 0 && this.lateReplies.queued() > 0;
	}

	/** How many tasks wait for this node's late-reply thread, for tests. */
	public int lateTasksQueued() {
		return this.lateReplies.queued();
	}

	/**
	 * Returns a borrowed connection; broken ones, those that still owe a reply (the next
	 * user would read it as its own) and those beyond the idle limit are closed.
	 * @param connection the connection from {@link #borrow}
	 */
	public void giveBack(PipelinedConnection connection) {
		if (!this.awaitingOpen.isEmpty() && !this.closed && connection.isReusable() && connection.isConnected()
				&& this.connector.isCurrent(connection) && handToAwaitingOpen(connection)) {
			// its slot goes with it; the borrower's own slot is freed when the connection
			// opened for it is given back in turn
			return;
		}
		try {
			if (connection.isReusable() && this.connector.isCurrent(connection)) {
				keepIdle(connection);
			}
			else {
				discard(connection);
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

	/**
	 * Opens the shared connection, on the connector thread, beside the pool's: it holds
	 * no slot, and is closed rather than given back. Fails at once while the node is in
	 * its back-off.
	 * @param timeoutMillis the bound for connecting
	 * @return the connection, greeted
	 */
	CompletableFuture<PipelinedConnection> openShared(int timeoutMillis) {
		JedisConnectionException down = this.closed ? new JedisConnectionException("Redlock has been closed")
				: this.connector.downFailure();
		if (down != null) {
			return CompletableFuture.failedFuture(down);
		}
		CompletableFuture<PipelinedConnection> result = new CompletableFuture<>();
		try {
			this.connector.execute(() -> {
				JedisConnectionException stillDown = this.connector.downFailure();
				if (stillDown != null) {
					result.completeExceptionally(stillDown);
					return;
				}
				try {
					PipelinedConnection connection = this.connector.connectAndGreet(timeoutMillis,
							(nanos) -> this.latency.replied(nanos, false));
					if (!this.connector.isCurrent(connection)) {
						connection.abort();
						result.completeExceptionally(new JedisConnectionException("the voter's master moved"));
						return;
					}
					result.complete(connection);
				}
				catch (RuntimeException ex) {
					this.connector.failed(ex);
					result.completeExceptionally(ex);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			result.completeExceptionally(new JedisConnectionException("Redlock has been closed", ex));
		}
		return result;
	}

	/** Opens a connection for a borrower, counting it. */
	private PipelinedConnection open(int timeoutMillis) {
		PipelinedConnection connection = this.connector.connectAndGreet(timeoutMillis,
				(nanos) -> this.latency.replied(nanos, false));
		this.warm.opened();
		return connection;
	}

	/**
	 * Opens a connection of its own, outside the pool, with this node's credentials and
	 * TLS settings: for a subscriber, which keeps it for as long as it listens.
	 * @param timeoutMillis the bound for connecting and for each read
	 * @return the connection, authenticated
	 * @throws AuthenticationFailedException if the node refused our credentials
	 */
	public PipelinedConnection connect(int timeoutMillis) {
		return this.connector.connect(timeoutMillis);
	}

	/** How many connections are borrowed now: in a round, or waiting for late replies. */
	public int connectionsInUse() {
		return this.maxTotal - this.permits.availablePermits();
	}

	/** How many borrowers wait for a connection being opened, for tests. */
	public int awaitingOpen() {
		return this.awaitingOpen.size();
	}

	/** How many idle connections are kept now. */
	public int idleCount() {
		return this.idle.size();
	}

	/**
	 * Closes every idle connection.
	 */
	public void discardIdle() {
		this.idle.drain().forEach(this::discard);
	}

	/**
	 * Closes a connection of this pool for good; when fewer than those kept warm are
	 * left, others are opened in the background.
	 */
	private void discard(PipelinedConnection connection) {
		if (connection.isReusable()) {
			connection.closeQuietly();
		}
		else {
			// it owes a reply or broke: a node that does not answer would hold a TLS
			// close (its closing alert, then the wait for the node's) up to the read
			// timeout, on a caller's or the renewal thread
			connection.abort();
		}
		this.warm.closed();
	}

	/**
	 * How many connections of this pool are open or being opened to be kept, the shared
	 * connection included.
	 */
	public int openConnections() {
		return this.warm.count() + ((this.shared != null && this.shared.isOpen()) ? 1 : 0);
	}

	@Override
	public void close() {
		this.closed = true;
		if (this.shared != null) {
			this.shared.close();
		}
		// queued connection attempts still run: each sees the pool closed and gives its
		// slot back
		this.connector.shutdown();
		this.lateReplies.close();
		this.warm.end();
		discardIdle();
		for (PermitWaiter waiter = this.permitWaiters.poll(); waiter != null; waiter = this.permitWaiters.poll()) {
			waiter.connection().completeExceptionally(new JedisConnectionException("Redlock has been closed"));
		}
	}

}
