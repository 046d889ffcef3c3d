package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.RedlockListener.ExtendEvent;
import dev.redlock.core.RedlockListener.ExtendOutcome;
import dev.redlock.core.RedlockListener.LeaseLostEvent;
import dev.redlock.core.RedlockListener.ReleaseEvent;

/**
 * Distributed locks on N independent Redis masters, following the Redlock algorithm.
 *
 * <p>
 * To acquire, a random value is written with {@code SET key value NX PX ttl} to every
 * node at once, within the node timeout. The lock is held if a quorum ({@code N/2 + 1})
 * of nodes accepted it and validity remains: {@code ttl - elapsed - drift > 0}, where
 * {@code elapsed} is measured after the last reply and
 * {@code drift = ttl * clockDriftFactor + 2 ms}. Otherwise the value is removed again
 * from every node where it may have landed, and the caller waits for the lock until the
 * wait time is spent: threads of one instance queue for a key in arrival order, and the
 * head tries again when the lock is released (the release script announces it on every
 * node, and this instance subscribes while it has waiters) or, failing any notice, after
 * a random delay around the retry delay. Release and extension run Lua scripts that touch
 * the key only while it holds the lease's value.
 *
 * <pre>{@code
 * Redlock redlock = Redlock.builder()
 *     .nodes(List.of("redis://10.0.0.1:6379", "redis://10.0.0.2:6379", "redis://10.0.0.3:6379"))
 *     .build();
 * try (Lease lease = redlock.acquire("stock:42", Duration.ofSeconds(10), Duration.ofSeconds(2))) {
 *     // at most one holder at a time while lease.isValid()
 * }
 * }</pre>
 *
 * <p>
 * Thread-safe. Every call blocks the calling thread for at most its bound. One daemon
 * thread, started on first use, renews and watches leases ({@link Lease#autoRenew()},
 * {@link Lease#onLost(Runnable)}). Close it to close its connections and stop that
 * thread.
 */
public final class Redlock implements AutoCloseable {

	/** The name of locks acquired without one. */
	public static final String DEFAULT_LOCK_NAME = "unnamed";

	private static final Logger logger = LoggerFactory.getLogger(Redlock.class);

	private final NodeGroup group;

	private final AcquireRound round;

	private final NodeDiagnostics diagnostics;

	private final LockWaiters waiters;

	private final Acquisitions acquisitions;

	private final RedlockSettings settings;

	private final LockArguments arguments;

	private final LongSupplier ticker;

	private final RenewalScheduler renewals = new RenewalScheduler();

	private final HeldLeases held = new HeldLeases(this.renewals);

	/**
	 * Runs the loss callbacks of leases whose loss the renewal thread found, so they
	 * never delay a renewal.
	 */
	private final OnDemandThread lossCallbacks = new OnDemandThread(
			OnDemandThread.numbered(OnDemandThread.LOSS_CALLBACKS));

	private volatile boolean closed;

	Redlock(List<RedisNodeUri> nodes, RedlockSettings settings, LongSupplier ticker, List<RedlockListener> listeners,
			TlsSettings tls) {
		this.settings = settings;
		this.arguments = new LockArguments(settings);
		this.ticker = ticker;
		this.group = new NodeGroup(nodes, settings, ticker, listeners, tls, this.renewals);
		this.round = new AcquireRound(this.group, settings, ticker);
		this.diagnostics = new NodeDiagnostics(this.group, settings);
		this.waiters = new LockWaiters(subscribers(this.group.pools(), settings, this.renewals), settings, ticker);
		this.acquisitions = new Acquisitions(this, this.group, this.round, this.waiters, this.held, this.arguments,
				ticker);
	}

	private static List<NodeSubscriber> subscribers(List<NodeConnectionPool> pools, RedlockSettings settings,
			RenewalScheduler scheduler) {
		List<NodeSubscriber> subscribers = new ArrayList<>(pools.size());
		for (int i = 0; i < pools.size(); i++) {
			subscribers.add(new NodeSubscriber(i, pools.get(i), settings.nodeTimeout().toNanos(),
					NodeGroup.reconnectBackoff(settings).toNanos(), scheduler));
		}
		return subscribers;
	}

	/**
	 * Starts building a {@code Redlock}.
	 * @return a new builder
	 */
	public static RedlockBuilder builder() {
		return new RedlockBuilder();
	}

	/**
	 * Acquires a lock with the default TTL and wait time of the settings.
	 * @param resource the name of the resource to lock
	 * @return the lease; close it to release the lock
	 * @throws LockNotAcquiredException if the lock could not be acquired within the wait
	 * time
	 */
	public Lease acquire(String resource) {
		return acquire(DEFAULT_LOCK_NAME, resource, this.settings.defaultTtl(), this.settings.defaultWaitTime());
	}

	/**
	 * Acquires a lock under the name {@value #DEFAULT_LOCK_NAME}. See
	 * {@link #acquire(String, String, Duration, Duration)}.
	 * @param resource the name of the resource to lock (the key prefix is added in front
	 * of it)
	 * @param ttl how long the lock lives on the nodes unless released or extended
	 * @param waitTime how long to keep trying; zero for a single attempt
	 * @return the lease; close it to release the lock
	 * @throws LockNotAcquiredException if the lock could not be acquired within the wait
	 * time
	 */
	public Lease acquire(String resource, Duration ttl, Duration waitTime) {
		return acquire(DEFAULT_LOCK_NAME, resource, ttl, waitTime);
	}

	/**
	 * Acquires a lock, waiting for it until the wait time is spent: in this instance's
	 * queue for the key, behind the threads that came first, trying again when the lock
	 * is released or after the retry delay. The last attempt starts no later than the
	 * wait time; it takes at most one node timeout, and cleaning up after it at most two
	 * more (the second only on nodes that lost their script cache).
	 * @param name the lock's name for listeners and metrics: bounded, such as one per
	 * call site (never the resource when resources are unbounded)
	 * @param resource the name of the resource to lock (the key prefix is added in front
	 * of it)
	 * @param ttl how long the lock lives on the nodes unless released or extended
	 * @param waitTime how long to keep trying; zero for a single attempt
	 * @return the lease; close it to release the lock
	 * @throws LockNotAcquiredException if the lock could not be acquired within the wait
	 * time, or the thread was interrupted while waiting (its interrupt flag is then set)
	 * @throws IllegalArgumentException if the resource is empty, the key (prefix and
	 * resource) longer than {@link RedlockSettings#maxKeyLength()} UTF-8 bytes, the TTL
	 * below 1 ms or within the clock drift allowance, or the wait time negative
	 * @throws IllegalStateException if this {@code Redlock} is closed, or was closed
	 * while the thread waited
	 */
	public Lease acquire(String name, String resource, Duration ttl, Duration waitTime) {
		return this.acquisitions.acquire(name, resource, ttl, waitTime, false);
	}

	/**
	 * Acquires a lock like {@link #acquire(String, String, Duration, Duration)}, with a
	 * fencing token: a number that grows with every fenced acquisition of the resource,
	 * across all holders, so that the store the lock protects can refuse a write from an
	 * older holder (one that paused past its lease and does not know it). See
	 * {@link Lease#fencingToken()} for how it is made and what it needs from the nodes.
	 * @param name the lock's name for listeners and metrics
	 * @param resource the name of the resource to lock
	 * @param ttl how long the lock lives on the nodes unless released or extended
	 * @param waitTime how long to keep trying; zero for a single attempt
	 * @return the lease, with its {@link Lease#fencingToken() fencing token}
	 * @throws LockNotAcquiredException if the lock could not be acquired within the wait
	 * time (a quorum that granted it but did not confirm the token within the validity
	 * counts as {@code VALIDITY_EXHAUSTED})
	 */
	public Lease acquireFenced(String name, String resource, Duration ttl, Duration waitTime) {
		return this.acquisitions.acquire(name, resource, ttl, waitTime, true);
	}

	/**
	 * Makes a single attempt to acquire a lock, without waiting, under the name
	 * {@value #DEFAULT_LOCK_NAME}.
	 * @param resource the name of the resource to lock
	 * @param ttl how long the lock lives on the nodes unless released or extended
	 * @return the lease, or empty if the lock could not be acquired now
	 */
	public Optional<Lease> tryAcquire(String resource, Duration ttl) {
		return tryAcquire(DEFAULT_LOCK_NAME, resource, ttl);
	}

	/**
	 * Makes a single attempt to acquire a lock, without waiting.
	 * @param name the lock's name for listeners and metrics
	 * @param resource the name of the resource to lock
	 * @param ttl how long the lock lives on the nodes unless released or extended
	 * @return the lease, or empty if the lock could not be acquired now
	 * @throws IllegalArgumentException if the resource is empty, the key (prefix and
	 * resource) longer than {@link RedlockSettings#maxKeyLength()} UTF-8 bytes, or the
	 * TTL below 1 ms or within the clock drift allowance
	 */
	public Optional<Lease> tryAcquire(String name, String resource, Duration ttl) {
		return this.acquisitions.tryAcquire(name, resource, ttl, false);
	}

	/**
	 * Makes a single attempt to acquire a lock with a fencing token, without waiting; see
	 * {@link #acquireFenced(String, String, Duration, Duration)}.
	 * @param name the lock's name for listeners and metrics
	 * @param resource the name of the resource to lock
	 * @param ttl how long the lock lives on the nodes unless released or extended
	 * @return the lease, with its fencing token, or empty if the lock could not be
	 * acquired now
	 */
	public Optional<Lease> tryAcquireFenced(String name, String resource, Duration ttl) {
		return this.acquisitions.tryAcquire(name, resource, ttl, true);
	}

	/**
	 * Turns the second round of fenced acquisitions off or on; off only in the test that
	 * shows why it is needed.
	 */
	void confirmTokens(boolean confirm) {
		this.round.confirmTokens(confirm);
	}

	/** How many idle connections to a node are kept now; for tests. */
	int idleConnections(int node) {
		return this.group.pools().get(node).idleCount();
	}

	/**
	 * How long each node is expected to take to answer, in milliseconds; for tests'
	 * diagnostics.
	 */
	List<Double> expectedLatencies() {
		return this.group.pools().stream().map((pool) -> pool.expectedLatencyNanos() / 1e6).toList();
	}

	/** How many leases are recorded as held, without sweeping; for tests. */
	int heldCount() {
		return this.held.size();
	}

	void checkOpen() {
		if (this.closed) {
			throw new IllegalStateException("This Redlock is closed: it acquires no more locks");
		}
	}

	/** Extends a lease on the nodes; see {@link NodeGroup#extend}. */
	NodeGroup.Extension extendOnNodes(Lease lease, RawArgument value, Duration ttl, long start,
			long currentValidUntil) {
		return this.group.extend(lease, value, ttl, start, currentValidUntil);
	}

	/** Tells the listeners of an extension; never called under the lease's state lock. */
	void leaseExtended(Lease lease, ExtendOutcome outcome) {
		if (this.group.events().hasListeners()) {
			this.group.events().leaseExtended(new ExtendEvent(lease.name(), lease.resource(), outcome));
		}
	}

	/** Tells the listeners of a release; never called under the lease's state lock. */
	void leaseReleased(Lease lease, ReleaseOutcome outcome) {
		if (this.group.events().hasListeners()) {
			this.group.events()
				.leaseReleased(new ReleaseEvent(lease.name(), lease.resource(), outcome, lease.heldFor()));
		}
	}

	void leaseLost(Lease lease, LossReason reason) {
		this.group.events().leaseLost(new LeaseLostEvent(lease.name(), lease.resource(), reason, lease.heldFor()));
	}

	RenewalScheduler renewals() {
		return this.renewals;
	}

	OnDemandThread lossCallbacks() {
		return this.lossCallbacks;
	}

	/**
	 * Releases a lease on every node; see {@link NodeGroup#release}.
	 * @param keepNanos how much longer the lock must stay taken; zero or less to delete
	 * it now
	 */
	ReleaseOutcome releaseOnNodes(Lease lease, RawArgument value, long keepNanos) {
		this.held.remove(lease);
		this.waiters.releasing(lease.keyArgument(), value.getRaw());
		NodeGroup.Released released = this.group.release(lease, value, keepNanos);
		if (released.deleted()) {
			this.waiters.released(lease.keyArgument(), value.getRaw(), released.replies());
		}
		return released.outcome();
	}

	/**
	 * Returns how many threads wait for a lock of this instance right now, in its queues.
	 * @return the number of waiting threads
	 */
	public int waitingThreads() {
		return this.waiters.waiting();
	}

	/**
	 * Checks every node at once with {@code INFO}, within the node timeout. What the
	 * nodes say about their uptime also feeds the restart quarantine.
	 * @return one status per node, in configuration order
	 */
	public List<NodeStatus> checkNodes() {
		return this.diagnostics.checkNodes();
	}

	/**
	 * Checks the nodes and settings for misconfiguration, within about two node timeouts.
	 * Errors: one server listed twice under different addresses (the same {@code run_id}:
	 * it would fake a quorum), a node that is a replica. Warnings: fewer than 3 nodes or
	 * an even count, a node that cannot be reached now (a minority may be down at
	 * startup), a {@code maxmemory-policy} other than {@code noeviction} (lock keys carry
	 * a TTL, so even {@code volatile-*} policies may evict them), and a default TTL below
	 * 3 node timeouts.
	 * @return the findings, errors first; empty when all is well
	 */
	public List<NodeFinding> verifyNodes() {
		return this.diagnostics.verifyNodes();
	}

	/**
	 * Returns the leases this instance holds now: acquired, not released, and still
	 * within their validity.
	 * @return a snapshot
	 */
	public List<Lease> heldLeases() {
		return this.held.valid();
	}

	/**
	 * Returns how each node has answered since this instance was built.
	 * @return one entry per node, in configuration order
	 */
	public List<NodeStatistics> nodeStatistics() {
		return this.group.events().statistics();
	}

	/** Checks a TTL for a lease's extension; see {@link LockArguments#usableTtl}. */
	Duration usableTtl(Duration ttl) {
		return this.arguments.usableTtl(ttl);
	}

	/**
	 * Returns the settings this instance was built with.
	 * @return the settings
	 */
	public RedlockSettings settings() {
		return this.settings;
	}

	/**
	 * Returns the node addresses without credentials, in configuration order.
	 * @return e.g. {@code [redis://10.0.0.1:6379, rediss://10.0.0.2:6380]}
	 */
	public List<String> nodeAddresses() {
		return this.group.nodes().stream().map(RedisNodeUri::redacted).toList();
	}

	/**
	 * Returns how many nodes must agree for a lock to be held.
	 * @return {@code N/2 + 1}
	 */
	public int quorum() {
		return this.group.quorum();
	}

	/**
	 * Wakes the threads waiting for a lock (they throw {@link IllegalStateException}),
	 * stops renewing, makes one last attempt to remove lock values that slow nodes still
	 * hold from failed acquisitions and unconfirmed releases (waiting at most twice the
	 * node timeout), then closes every connection. Leases still held can no longer be
	 * renewed or released: they are marked {@link Lease#isLost() lost}
	 * ({@link LossReason#REDLOCK_CLOSED}) and their {@link Lease#onLost(Runnable)
	 * callbacks} run on the calling thread; their keys expire on the nodes at the end of
	 * their TTL. Acquiring after close throws {@link IllegalStateException}. Closing
	 * again does nothing.
	 */
	@Override
	public void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		this.waiters.close();
		this.renewals.close();
		this.group.close();
		this.held.markAllLost(LossReason.REDLOCK_CLOSED);
		this.lossCallbacks.close();
	}

	/**
	 * Returns whether {@link #close()} was called.
	 * @return {@code true} once closed
	 */
	public boolean isClosed() {
		return this.closed;
	}

	/**
	 * Returns how many times a {@link RedlockListener} threw. A listener's failure,
	 * whatever it throws, is logged (at most once a minute with its stack trace) and
	 * counted, and changes nothing else.
	 * @return the count since this instance was built
	 */
	public long listenerFailures() {
		return this.group.events().listenerFailures();
	}

	@Override
	public String toString() {
		return "Redlock" + nodeAddresses();
	}

}
