package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.AcquireRound;
import dev.redlock.core.internal.LockArguments;
import dev.redlock.core.internal.NodeDiagnostics;
import dev.redlock.core.internal.NodeGroup;
import dev.redlock.core.internal.ScriptRounds;
import dev.redlock.core.internal.lease.HeldLeases;
import dev.redlock.core.internal.lease.LeaseSupport;
import dev.redlock.core.internal.round.VoterLayout;
import dev.redlock.core.internal.thread.RenewalScheduler;
import dev.redlock.core.internal.transport.ClusterVoters;
import dev.redlock.core.internal.transport.NodeConnectionPool;
import dev.redlock.core.internal.transport.RedisNodeUri;
import dev.redlock.core.internal.transport.WarmUp;
import dev.redlock.core.internal.waiting.LockWaiters;
import dev.redlock.core.internal.waiting.NodeSubscriber;

/**
 * Distributed locks on N independent Redis masters, following the Redlock algorithm.
 *
 * <p>
 * To acquire, a random value is written with {@code SET key value NX PX ttl} to every
 * node at once. The lock is held if a quorum ({@code N/2 + 1}) accepted it and validity
 * remains: {@code ttl - elapsed - (ttl * clockDriftFactor + 2 ms) > 0}. Otherwise the
 * value is removed from every node where it may have landed, and the caller waits in this
 * instance's queue for the key, woken by the release (the release script announces it)
 * or, failing any notice, after the retry delay. Release and extension run Lua scripts
 * that touch the key only while it holds the lease's value.
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
 * Thread-safe; every call blocks for at most its bound. Daemon threads start on demand
 * (renewal, connecting, late replies); close it to close its connections and stop them.
 */
public final class Redlock implements AutoCloseable {

	/** The name of locks acquired without one. */
	public static final String DEFAULT_LOCK_NAME = LockRequest.DEFAULT_NAME;

	private final NodeGroup group;

	private final AcquireRound round;

	private final NodeDiagnostics diagnostics;

	private final LockWaiters waiters;

	private final Acquisitions acquisitions;

	private final RedlockSettings settings;

	private final RenewalScheduler renewals = new RenewalScheduler();

	private final HeldLeases<Lease> held = new HeldLeases<>(this.renewals::schedule,
			(lease) -> lease.remainingValidity().toNanos());

	private final LeaseSupport leases;

	private Redlock(List<RedisNodeUri> nodes, VoterLayout layout, RedlockSettings settings, LongSupplier ticker,
			List<RedlockListener> listeners, TlsSettings tls) {
		this.settings = settings;
		LockArguments arguments = new LockArguments(settings, layout.keys());
		this.group = new NodeGroup(nodes, layout, settings, listeners, tls, this.renewals);
		ScriptRounds rounds = new ScriptRounds(this.group, settings, ticker);
		this.round = new AcquireRound(this.group, rounds, settings, ticker);
		this.diagnostics = new NodeDiagnostics(this.group, settings);
		this.waiters = new LockWaiters(NodeSubscriber.forEach(this.group.pools(), settings, this.renewals),
				this.group.quorum(), settings, ticker);
		this.leases = new LeaseSupport(this.group, rounds, settings, arguments, this.waiters, this.held, this.renewals);
		this.acquisitions = new Acquisitions(this.leases, this.group, this.round, this.waiters, this.held, arguments,
				ticker);
		this.group.warmUp();
	}

	/**
	 * Starts building a {@code Redlock}.
	 * @return a new builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Acquires a lock with the default TTL and wait time of the settings.
	 * @param resource the resource to lock (the key prefix goes in front of it)
	 * @return the lease; close it to release the lock
	 * @throws LockNotAcquiredException if the lock could not be acquired within the wait
	 * time
	 */
	public Lease acquire(String resource) {
		return acquire(LockRequest.of(resource, this.settings.defaultTtl()), this.settings.defaultWaitTime());
	}

	/**
	 * Acquires a lock named {@value #DEFAULT_LOCK_NAME}; see
	 * {@link #acquire(LockRequest, Duration)}.
	 * @param resource the resource to lock (the key prefix goes in front of it)
	 * @param ttl how long the lock lives on the nodes unless released or extended
	 * @param waitTime how long to keep trying; zero for a single attempt
	 * @return the lease; close it to release the lock
	 * @throws LockNotAcquiredException if the lock could not be acquired within the wait
	 * time
	 */
	public Lease acquire(String resource, Duration ttl, Duration waitTime) {
		return acquire(LockRequest.of(resource, ttl), waitTime);
	}

	/**
	 * Acquires a lock, waiting for it until the wait time is spent: in this instance's
	 * queue for the key, behind the threads that came first, trying again when the lock
	 * is released or after the retry delay. The last attempt starts no later than the
	 * wait time; it takes at most one node timeout, and cleaning up after it at most two
	 * more (the second only on nodes that lost their script cache). When a release of the
	 * same key by this instance could not be confirmed on a majority, its value is
	 * removed before the attempt, so it never refuses this acquisition: one node timeout
	 * more at most.
	 * @param request what to lock, for how long, under which name, fenced or not
	 * @param waitTime how long to keep trying; zero for a single attempt
	 * @return the lease (with its {@link Lease#fencingToken() fencing token} if the
	 * request is fenced); close it to release the lock
	 * @throws LockNotAcquiredException if the lock could not be acquired within the wait
	 * time, or the thread was interrupted while waiting (its interrupt flag is then set);
	 * a fenced lock granted by a quorum that did not confirm the token in time counts as
	 * {@code VALIDITY_EXHAUSTED}
	 * @throws IllegalArgumentException if the resource is empty, the key (prefix and
	 * resource) longer than {@link RedlockSettings#maxKeyLength()} UTF-8 bytes, the TTL
	 * below 1 ms or within the clock drift allowance, or the wait time negative
	 * @throws IllegalStateException if this {@code Redlock} is closed, or was closed
	 * while the thread waited
	 */
	public Lease acquire(LockRequest request, Duration waitTime) {
		return this.acquisitions.acquire(request, waitTime);
	}

	/**
	 * Makes a single attempt, without waiting, to acquire a lock named
	 * {@value #DEFAULT_LOCK_NAME}.
	 * @param resource the resource to lock (the key prefix goes in front of it)
	 * @param ttl how long the lock lives on the nodes unless released or extended
	 * @return the lease, or empty if the lock could not be acquired now
	 */
	public Optional<Lease> tryAcquire(String resource, Duration ttl) {
		return tryAcquire(LockRequest.of(resource, ttl));
	}

	/**
	 * Makes a single attempt to acquire a lock, without waiting.
	 * @param request what to lock, for how long, under which name, fenced or not
	 * @return the lease, or empty if the lock could not be acquired now
	 * @throws IllegalArgumentException as {@link #acquire(LockRequest, Duration)}
	 */
	public Optional<Lease> tryAcquire(LockRequest request) {
		return this.acquisitions.tryAcquire(request);
	}

	/** The parts behind this instance, for tests. */
	RedlockInternals internals() {
		return new RedlockInternals(this.group, this.round, this.held, this.renewals, this.leases);
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
	 * Checks the nodes and settings for misconfiguration, within about two node timeouts
	 * ({@link NodeFinding} lists what is an error and what a warning).
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
		List<NodeConnectionPool> pools = this.group.pools();
		return this.group.events().statistics((node) -> pools.get(node).master().address());
	}

	/**
	 * Returns what this instance holds on to now: connections, queued clean-ups,
	 * scheduled tasks, waiting threads and held leases. None of it grows without bound,
	 * whatever the nodes do; watch it over a long run.
	 * @return a snapshot
	 */
	public RedlockFootprint footprint() {
		List<Integer> connections = new ArrayList<>(this.group.pools().size());
		List<Integer> idle = new ArrayList<>(this.group.pools().size());
		for (NodeConnectionPool pool : this.group.pools()) {
			connections.add(pool.openConnections());
			idle.add(pool.idleCount());
		}
		return new RedlockFootprint(List.copyOf(connections), List.copyOf(idle), this.group.cleanup().queued(),
				this.renewals.scheduledRuns(), this.waiters.waiting(), this.held.size());
	}

	/**
	 * Returns the settings this instance was built with.
	 * @return the settings
	 */
	public RedlockSettings settings() {
		return this.settings;
	}

	/**
	 * Returns the node addresses without credentials, in configuration order, a cluster
	 * voter's shards each in its place.
	 * @return e.g. {@code [redis://10.0.0.1:6379, rediss://10.0.0.2:6380]}
	 */
	public List<String> nodeAddresses() {
		return this.group.nodes().stream().map(RedisNodeUri::redacted).toList();
	}

	/**
	 * Returns how many voters must agree for a lock to be held (a cluster voter is one,
	 * whatever its shards).
	 * @return {@code N/2 + 1}, {@code N} the number of voters
	 */
	public int quorum() {
		return this.group.quorum().size();
	}

	/**
	 * Wakes the threads waiting for a lock (they throw {@link IllegalStateException}),
	 * stops renewing, makes one last attempt (at most two node timeouts) to remove values
	 * that slow nodes still hold, then closes every connection. Leases still held are
	 * marked {@link Lease#isLost() lost} ({@link LossReason#REDLOCK_CLOSED}), their
	 * callbacks run on the calling thread, and their keys expire with their TTL.
	 * Acquiring after close throws {@link IllegalStateException}; closing again does
	 * nothing.
	 */
	@Override
	public void close() {
		if (this.leases.isClosed()) {
			return;
		}
		this.leases.markClosed();
		this.waiters.close();
		this.renewals.close();
		this.group.close();
		for (Lease lease : this.held.removeAll()) {
			if (!lease.isReleased() && !lease.isLost()) {
				lease.markLost(LossReason.REDLOCK_CLOSED);
			}
		}
		this.leases.lossCallbacks().close();
	}

	/**
	 * Returns whether {@link #close()} was called.
	 * @return {@code true} once closed
	 */
	public boolean isClosed() {
		return this.leases.isClosed();
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

	/**
	 * Builds a {@link Redlock} from node URIs and settings.
	 */
	public static final class Builder {

		private final List<String> nodes = new ArrayList<>();

		/**
		 * Which of its nodes serves each slot, by voter in order: {@code null} for a
		 * voter of one node.
		 */
		private final List<short @Nullable []> slotMaps = new ArrayList<>();

		private RedlockSettings settings = RedlockSettings.defaults();

		private LongSupplier ticker = System::nanoTime;

		private final List<RedlockListener> listeners = new ArrayList<>();

		private TlsSettings tls = TlsSettings.jvmDefault();

		private @Nullable String sentinelUsername;

		private @Nullable String sentinelPassword;

		private Builder() {
		}

		/**
		 * Adds a voter.
		 * @param uri {@code redis://[user:password@]host:port[/db]} or {@code rediss://…}
		 * for a master at a fixed address,
		 * {@code redis-sentinel://[user:password@]host1:port1,host2:port2[/db]#masterName}
		 * for the master a Sentinel group names, or
		 * {@code redis-cluster://[user:password@]seed1:port1,seed2:port2} for a Redis or
		 * Valkey Cluster (one voter, its shards read when the instance is built)
		 * @return this builder
		 */
		public Builder node(String uri) {
			this.nodes.add(uri);
			this.slotMaps.add(null);
			return this;
		}

		/**
		 * Adds nodes.
		 * @param uris node URIs, see {@link #node(String)}
		 * @return this builder
		 */
		public Builder nodes(List<String> uris) {
			uris.forEach(this::node);
			return this;
		}

		/**
		 * Adds a voter of several standalone masters, each serving an equal range of the
		 * hash slots, as a cluster's primaries do when it starts: the seam that cluster
		 * voters will use, for tests until they are built.
		 * @param shardUris the shards' {@code redis://} URIs, in slot order
		 * @return this builder
		 */
		Builder shardedVoter(List<String> shardUris) {
			if (shardUris.isEmpty()) {
				throw new IllegalArgumentException("a sharded voter needs at least one node");
			}
			return shardedVoter(shardUris, VoterLayout.equalRanges(shardUris.size()));
		}

		/**
		 * Adds a voter of several standalone masters or cluster primaries, each serving
		 * the slots a slot map gives it: for tests, as {@link #shardedVoter(List)}.
		 * @param shardUris the shards' {@code redis://} URIs
		 * @param shardOfSlot the index in {@code shardUris} of the shard serving each of
		 * the 16,384 slots
		 * @return this builder
		 */
		Builder shardedVoter(List<String> shardUris, short[] shardOfSlot) {
			this.nodes.addAll(shardUris);
			this.slotMaps.add((shardUris.size() == 1) ? null : shardOfSlot.clone());
			return this;
		}

		/**
		 * Sets the settings; {@link RedlockSettings#defaults()} when not called.
		 * @param settings the settings
		 * @return this builder
		 */
		public Builder settings(RedlockSettings settings) {
			this.settings = Objects.requireNonNull(settings, "settings");
			return this;
		}

		/**
		 * Adds a listener, told of every acquisition, release, extension and node call.
		 * @param listener the listener
		 * @return this builder
		 */
		public Builder listener(RedlockListener listener) {
			this.listeners.add(Objects.requireNonNull(listener, "listener"));
			return this;
		}

		/**
		 * Sets how {@code rediss://} nodes are reached
		 * ({@link TlsSettings#jvmDefault()}).
		 * @param tls the TLS settings
		 * @return this builder
		 */
		public Builder tls(TlsSettings tls) {
			this.tls = Objects.requireNonNull(tls, "tls");
			return this;
		}

		/**
		 * Sets the credentials of the sentinels of every Sentinel voter
		 * ({@code redis-sentinel://}), for sentinels protected by a password of their
		 * own. Without them, sentinels are asked without credentials, or with the voter's
		 * user and password once one answers {@code NOAUTH}. The password never appears
		 * in logs, exceptions or health.
		 * @param username the sentinels' ACL user, or {@code null} for the default user
		 * @param password their password
		 * @return this builder
		 */
		public Builder sentinelCredentials(@Nullable String username, String password) {
			if (password == null || password.isEmpty()) {
				throw new IllegalArgumentException("the sentinels' password must not be empty");
			}
			this.sentinelUsername = (username == null || username.isEmpty()) ? null : username;
			this.sentinelPassword = password;
			return this;
		}

		/**
		 * Sets the monotonic clock of validity and wait times, for tests that control it.
		 * @param nanoTicker nanoseconds, like {@link System#nanoTime()} (the default)
		 * @return this builder
		 */
		public Builder ticker(LongSupplier nanoTicker) {
			this.ticker = Objects.requireNonNull(nanoTicker, "ticker");
			return this;
		}

		/**
		 * Checks the nodes and builds the instance, which starts opening
		 * {@link RedlockSettings#poolMinIdle()} connections to each node in the
		 * background; calls made before a quorum of nodes has one wait for them (at most
		 * 2 s).
		 * @return a new {@code Redlock}
		 * @throws InvalidRedlockConfigurationException if there are no nodes, a URI is
		 * malformed, one server is listed twice (which would fake a quorum), or a cluster
		 * voter cannot be used: none of its seeds tells its slot map (it is read now), a
		 * seed is not a cluster node, its seeds are of two clusters, or some slots are
		 * served by no primary
		 */
		public Redlock build() {
			List<RedisNodeUri> voters = RedisNodeUri.parseAll(this.nodes);
			String password = this.sentinelPassword;
			if (password != null) {
				voters = voters.stream()
					.map((voter) -> voter.withSentinelCredentials(this.sentinelUsername, password))
					.toList();
			}
			int seedTimeoutMillis = (int) Math.min(Integer.MAX_VALUE,
					Math.max(WarmUp.CONNECT_TIMEOUT_MILLIS, this.settings.nodeTimeout().toMillis()));
			ClusterVoters.Expanded expanded = ClusterVoters.expand(voters, this.slotMaps, seedTimeoutMillis,
					this.settings.clientName(), this.tls);
			boolean clusterVoter = voters.stream().anyMatch((voter) -> voter.cluster() != null);
			VoterLayout layout = VoterLayout.ofSlotMaps(expanded.slotMaps(), clusterVoter);
			return new Redlock(expanded.nodes(), layout, this.settings, this.ticker, List.copyOf(this.listeners),
					this.tls);
		}

	}

}
