package dev.redlock.core;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.LockNotAcquiredException.Reason;
import dev.redlock.core.LockScripts.Script;
import dev.redlock.core.RedlockListener.AcquireEvent;
import dev.redlock.core.RedlockListener.AcquireOutcome;
import dev.redlock.core.RedlockListener.ExtendEvent;
import dev.redlock.core.RedlockListener.ExtendOutcome;
import dev.redlock.core.RedlockListener.LeaseLostEvent;
import dev.redlock.core.RedlockListener.LossReason;
import dev.redlock.core.RedlockListener.NodeCommand;
import dev.redlock.core.RedlockListener.ReleaseEvent;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.Protocol.Keyword;

/**
 * Distributed locks on N independent Redis masters, following the Redlock algorithm.
 *
 * <p>To acquire, a random value is written with {@code SET key value NX PX ttl} to every node at once, within the
 * node timeout. The lock is held if a quorum ({@code N/2 + 1}) of nodes accepted it and validity remains:
 * {@code ttl - elapsed - drift > 0}, where {@code elapsed} is measured after the last reply and
 * {@code drift = ttl * clockDriftFactor + 2 ms}. Otherwise the value is removed again from every node where it may
 * have landed and the attempt is repeated after a random delay until the wait time is spent. Release and extension
 * run Lua scripts that touch the key only while it holds the lease's value.
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
 * <p>Thread-safe. Every call blocks the calling thread for at most its bound. One daemon thread, started on first
 * use, renews and watches leases ({@link Lease#autoRenew()}, {@link Lease#onLost(Runnable)}). Close it to close its
 * connections and stop that thread.
 */
public final class Redlock implements AutoCloseable {

	/** Time the startup check of the nodes may take, new connections included. */
	private static final long STARTUP_CHECK_NANOS = TimeUnit.SECONDS.toNanos(2);

	/** The name of locks acquired without one. */
	public static final String DEFAULT_LOCK_NAME = "unnamed";

	private static final Logger logger = LoggerFactory.getLogger(Redlock.class);

	private static final byte[] FENCE_PREFIX = LockScripts.FENCE_KEY_PREFIX.getBytes(StandardCharsets.UTF_8);

	/** The least delay between two sweeps of the held leases. */
	private static final long MIN_SWEEP_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

	private final List<RedisNodeUri> nodes;

	private final List<NodeConnectionPool> pools;

	private final List<NodeQuarantine> quarantines;

	private final Fanout fanout;

	private final RedlockSettings settings;

	private final LongSupplier ticker;

	private final int quorum;

	private final LockEvents events;

	private final Set<Lease> held = ConcurrentHashMap.newKeySet();

	private final RenewalScheduler renewals = new RenewalScheduler();

	/** Runs the loss callbacks of leases whose loss the renewal thread found, so they never delay a renewal. */
	private final OnDemandThread lossCallbacks = new OnDemandThread(
			OnDemandThread.numbered(OnDemandThread.LOSS_CALLBACKS));

	private final ValueCleanup cleanup;

	/** Guards the scheduling of sweeps of {@link #held}, which drop expired leases that were never released. */
	private final Object sweepLock = new Object();

	private @Nullable ScheduledFuture<?> sweep;

	private volatile boolean sweepScheduled;

	/** {@link System#nanoTime()} when the scheduled sweep is due. */
	private volatile long sweepDueNanos;

	private volatile boolean closed;

	private volatile @Nullable TtlArgument lastTtl;

	/**
	 * Whether fenced acquisitions confirm their token on a quorum (the second round); off only in the test that
	 * shows why it is needed.
	 */
	private volatile boolean confirmTokens = true;

	private Redlock(List<RedisNodeUri> nodes, RedlockSettings settings, LongSupplier ticker,
			List<RedlockListener> listeners, TlsSettings tls) {
		this.nodes = List.copyOf(nodes);
		this.events = new LockEvents(listeners, this.nodes);
		this.settings = settings;
		this.ticker = ticker;
		this.quorum = nodes.size() / 2 + 1;
		List<NodeConnectionPool> pools = new ArrayList<>(nodes.size());
		List<NodeQuarantine> quarantines = new ArrayList<>(nodes.size());
		for (RedisNodeUri node : nodes) {
			NodeQuarantine quarantine = new NodeQuarantine(node, settings.restartQuarantine());
			quarantines.add(quarantine);
			pools.add(new NodeConnectionPool(node, settings.poolMaxTotal(), settings.poolMaxIdle(),
					settings.clientName(), reconnectBackoff(settings).toNanos(), quarantine, tls));
		}
		this.pools = List.copyOf(pools);
		this.quarantines = List.copyOf(quarantines);
		this.fanout = new Fanout(this.pools, settings.nodeTimeout().toNanos());
		this.cleanup = new ValueCleanup(new Fanout(this.pools, settings.nodeTimeout().toNanos(), true), this.pools,
				this.renewals, settings.nodeTimeout().toNanos());
	}

	/**
	 * How long a node whose connection attempt failed is left alone: long enough that a dead node costs nothing, short
	 * enough that a restarted one is back within a few retries.
	 */
	private static Duration reconnectBackoff(RedlockSettings settings) {
		Duration fourTimeouts = settings.nodeTimeout().multipliedBy(4);
		Duration floor = Duration.ofMillis(250);
		return (fourTimeouts.compareTo(floor) > 0) ? fourTimeouts : floor;
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
	 * @param resource the name of the resource to lock
	 * @return the lease; close it to release the lock
	 * @throws LockNotAcquiredException if the lock could not be acquired within the wait time
	 */
	public Lease acquire(String resource) {
		return acquire(DEFAULT_LOCK_NAME, resource, this.settings.defaultTtl(), this.settings.defaultWaitTime());
	}

	/**
	 * Acquires a lock under the name {@value #DEFAULT_LOCK_NAME}. See
	 * {@link #acquire(String, String, Duration, Duration)}.
	 * @param resource the name of the resource to lock (the key prefix is added in front of it)
	 * @param ttl how long the lock lives on the nodes unless released or extended
	 * @param waitTime how long to keep trying; zero for a single attempt
	 * @return the lease; close it to release the lock
	 * @throws LockNotAcquiredException if the lock could not be acquired within the wait time
	 */
	public Lease acquire(String resource, Duration ttl, Duration waitTime) {
		return acquire(DEFAULT_LOCK_NAME, resource, ttl, waitTime);
	}

	/**
	 * Acquires a lock, retrying after random delays until the wait time is spent. The last attempt starts no later
	 * than the wait time; it takes at most one node timeout, and cleaning up after it at most two more (the second
	 * only on nodes that lost their script cache).
	 * @param name the lock's name for listeners and metrics: bounded, such as one per call site (never the resource
	 * when resources are unbounded)
	 * @param resource the name of the resource to lock (the key prefix is added in front of it)
	 * @param ttl how long the lock lives on the nodes unless released or extended
	 * @param waitTime how long to keep trying; zero for a single attempt
	 * @return the lease; close it to release the lock
	 * @throws LockNotAcquiredException if the lock could not be acquired within the wait time, or the thread was
	 * interrupted while waiting (its interrupt flag is then set)
	 * @throws IllegalArgumentException if the resource is empty, the key (prefix and resource) longer than
	 * {@link RedlockSettings#maxKeyLength()} UTF-8 bytes, the TTL below 1 ms or within the clock drift allowance, or
	 * the wait time negative
	 */
	public Lease acquire(String name, String resource, Duration ttl, Duration waitTime) {
		return acquire(name, resource, ttl, waitTime, false);
	}

	/**
	 * Acquires a lock like {@link #acquire(String, String, Duration, Duration)}, with a fencing token: a number that
	 * grows with every fenced acquisition of the resource, across all holders, so that the store the lock protects
	 * can refuse a write from an older holder (one that paused past its lease and does not know it). See
	 * {@link Lease#fencingToken()} for how it is made and what it needs from the nodes.
	 * @param name the lock's name for listeners and metrics
	 * @param resource the name of the resource to lock
	 * @param ttl how long the lock lives on the nodes unless released or extended
	 * @param waitTime how long to keep trying; zero for a single attempt
	 * @return the lease, with its {@link Lease#fencingToken() fencing token}
	 * @throws LockNotAcquiredException if the lock could not be acquired within the wait time (a quorum that granted
	 * it but did not confirm the token within the validity counts as {@code VALIDITY_EXHAUSTED})
	 */
	public Lease acquireFenced(String name, String resource, Duration ttl, Duration waitTime) {
		return acquire(name, resource, ttl, waitTime, true);
	}

	private Lease acquire(String name, String resource, Duration ttl, Duration waitTime, boolean fenced) {
		checkOpen();
		checkName(name);
		RawArgument key = keyFor(resource);
		Duration lockTtl = usableTtl(ttl);
		long waitNanos = waitNanos(waitTime);
		long start = this.ticker.getAsLong();
		long deadline = start + waitNanos;
		int attempts = 0;
		while (true) {
			if (Thread.currentThread().isInterrupted()) {
				throw notAcquired(name, interrupted(resource, attempts, start, null));
			}
			attempts++;
			Attempt attempt = attempt(name, resource, key, lockTtl, fenced);
			if (attempt.lease != null) {
				return acquired(attempt, start, attempts);
			}
			long left = deadline - this.ticker.getAsLong();
			if (left <= 0) {
				throw notAcquired(name, attempt.failure(resource, attempts, elapsedSince(start)));
			}
			try {
				TimeUnit.NANOSECONDS.sleep(Math.min(left, nextRetryDelayNanos()));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw notAcquired(name, interrupted(resource, attempts, start, ex));
			}
		}
	}

	/**
	 * Makes a single attempt to acquire a lock, without waiting, under the name {@value #DEFAULT_LOCK_NAME}.
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
	 * @throws IllegalArgumentException if the resource is empty, the key (prefix and resource) longer than
	 * {@link RedlockSettings#maxKeyLength()} UTF-8 bytes, or the TTL below 1 ms or within the clock drift allowance
	 */
	public Optional<Lease> tryAcquire(String name, String resource, Duration ttl) {
		return tryAcquire(name, resource, ttl, false);
	}

	/**
	 * Makes a single attempt to acquire a lock with a fencing token, without waiting; see
	 * {@link #acquireFenced(String, String, Duration, Duration)}.
	 * @param name the lock's name for listeners and metrics
	 * @param resource the name of the resource to lock
	 * @param ttl how long the lock lives on the nodes unless released or extended
	 * @return the lease, with its fencing token, or empty if the lock could not be acquired now
	 */
	public Optional<Lease> tryAcquireFenced(String name, String resource, Duration ttl) {
		return tryAcquire(name, resource, ttl, true);
	}

	private Optional<Lease> tryAcquire(String name, String resource, Duration ttl, boolean fenced) {
		checkOpen();
		checkName(name);
		RawArgument key = keyFor(resource);
		Duration lockTtl = usableTtl(ttl);
		Attempt attempt = attempt(name, resource, key, lockTtl, fenced);
		if (attempt.lease != null) {
			return Optional.of(acquired(attempt, attempt.start, 1));
		}
		notAcquired(name, attempt.failure(resource, 1, Duration.ofNanos(attempt.end - attempt.start)));
		return Optional.empty();
	}

	/**
	 * Records an acquisition; reads no clock, so that a test's scripted ticker sees only the algorithm's reads.
	 * Should anything fail here, the lock is released before the failure reaches the caller, never left on the nodes
	 * until its TTL.
	 */
	private Lease acquired(Attempt attempt, long start, int attempts) {
		Lease lease = attempt.lease;
		try {
			this.held.add(lease);
			sweepHeldWithin(attempt.validUntil - attempt.end);
			if (this.closed) {
				// closed while this lease was being acquired: it can be neither renewed nor watched
				lease.markLost(LossReason.REDLOCK_CLOSED);
			}
			if (this.events.hasListeners()) {
				this.events.acquireFinished(new AcquireEvent(lease.name(), lease.resource(), AcquireOutcome.ACQUIRED,
						Duration.ofNanos(attempt.end - start), attempts,
						Duration.ofNanos(attempt.validUntil - attempt.end)));
			}
			return lease;
		}
		catch (Throwable ex) {
			lease.release();
			throw ex;
		}
	}

	/**
	 * Makes sure a sweep of the held leases runs once a validity of this length is over: leases that are never
	 * released are dropped without anyone asking. Cheap when a sweep is due no later (the usual case: the same TTL
	 * again).
	 */
	private void sweepHeldWithin(long validityNanos) {
		long due = System.nanoTime() + Math.max(MIN_SWEEP_DELAY_NANOS, validityNanos);
		if (this.sweepScheduled && due - this.sweepDueNanos >= 0) {
			return;
		}
		synchronized (this.sweepLock) {
			if (this.sweepScheduled && due - this.sweepDueNanos >= 0) {
				return;
			}
			if (this.sweep != null) {
				this.sweep.cancel(false);
			}
			try {
				this.sweep = this.renewals.schedule(this::sweepHeld, due - System.nanoTime());
				this.sweepDueNanos = due;
				this.sweepScheduled = true;
			}
			catch (IllegalStateException ex) {
				// closed: close() let go of every lease
			}
		}
	}

	/** Drops the leases whose validity is over; runs again when the next one's ends. */
	private void sweepHeld() {
		synchronized (this.sweepLock) {
			this.sweepScheduled = false;
			this.sweep = null;
		}
		long next = Long.MAX_VALUE;
		for (Lease lease : this.held) {
			long left = lease.remainingValidity().toNanos();
			if (left == 0) {
				this.held.remove(lease);
			}
			else {
				next = Math.min(next, left);
			}
		}
		if (next != Long.MAX_VALUE) {
			sweepHeldWithin(next + TimeUnit.MILLISECONDS.toNanos(1));
		}
	}

	/** How many values wait to be removed from a node off the caller's path; for tests. */
	int cleanupWaiting(int node) {
		return this.cleanup.waiting(node);
	}

	/** How many idle connections to a node are kept now; for tests. */
	int idleConnections(int node) {
		return this.pools.get(node).idleCount();
	}

	/** How many leases are recorded as held, without sweeping; for tests. */
	int heldCount() {
		return this.held.size();
	}

	private void checkOpen() {
		if (this.closed) {
			throw new IllegalStateException("This Redlock is closed: it acquires no more locks");
		}
	}

	private static void checkName(String name) {
		if (name == null || name.isBlank()) {
			throw new IllegalArgumentException("Lock name must not be null or blank, was "
					+ ((name == null) ? "null" : "'" + name + "'"));
		}
	}

	/**
	 * Checks a wait time and returns it in nanoseconds.
	 * @throws IllegalArgumentException if it is negative, or too long to count in nanoseconds (about 292 years)
	 */
	private static long waitNanos(Duration waitTime) {
		if (waitTime == null || waitTime.isNegative()) {
			throw new IllegalArgumentException("Lock wait time must be zero or positive, was " + waitTime);
		}
		return toNanos(waitTime, "Lock wait time");
	}

	/**
	 * Converts a duration to nanoseconds for the monotonic clock.
	 * @throws IllegalArgumentException naming the argument if it exceeds the clock's range (about 292 years)
	 */
	static long toNanos(Duration duration, String what) {
		try {
			return duration.toNanos();
		}
		catch (ArithmeticException ex) {
			throw new IllegalArgumentException(what + " must be at most " + Duration.ofNanos(Long.MAX_VALUE)
					+ " (the range of the monotonic clock), was " + duration, ex);
		}
	}

	private LockNotAcquiredException notAcquired(String name, LockNotAcquiredException failure) {
		this.events.acquireFinished(new AcquireEvent(name, failure.resource(), AcquireOutcome.of(failure.reason()),
				failure.waited(), failure.attempts(), Duration.ZERO));
		return failure;
	}

	private Attempt attempt(String name, String resource, RawArgument key, Duration ttl, boolean fenced) {
		RawArgument value = LockValues.next();
		CommandArguments acquire = fenced
				? fencingScript(LockScripts.ACQUIRE_FENCED, key, value, ttlArgument(ttl.toMillis()))
				: new CommandArguments(Command.SET).add(key)
					.add(value)
					.add(Keyword.NX)
					.add(Keyword.PX)
					.add(ttlArgument(ttl.toMillis()));
		long start = this.ticker.getAsLong();
		long expiresAt = System.nanoTime() + ttl.toNanos();
		AcquireExit exit = new AcquireExit(key, value, fenced, expiresAt);
		NodeReply[] replies = this.fanout.execute(acquire, null, exit);
		try {
			return settle(name, resource, key, value, ttl, fenced, replies, start, expiresAt);
		}
		catch (Throwable ex) {
			// nothing of ours should fail here; if it does, our value must not stay where it landed
			runScript(NodeCommand.RELEASE, LockScripts.RELEASE, key, null, null, value);
			throw ex;
		}
	}

	/** Decides an acquisition round: a lease, or the clean-up of every node where our value may have landed. */
	private Attempt settle(String name, String resource, RawArgument key, RawArgument value, Duration ttl,
			boolean fenced, NodeReply[] replies, long start, long expiresAt) {
		long end = this.ticker.getAsLong();
		this.events.nodeReplies(NodeCommand.ACQUIRE, replies, (reply) -> reply.isGrant(fenced));
		long validUntil = start + ttl.toNanos() - this.settings.driftFor(ttl).toNanos();
		int granted = granted(replies, fenced);
		if (granted >= this.quorum && validUntil - end > 0) {
			long token = 0;
			if (fenced) {
				token = confirmToken(key, value, replies);
				end = this.ticker.getAsLong();
			}
			if (!fenced || (token > 0 && validUntil - end > 0)) {
				Lease lease = new Lease(this, name, resource, key, value, ttl, this.ticker, start, validUntil, token,
						writtenTo(replies));
				return new Attempt(lease, replies, granted, start, end, validUntil);
			}
		}
		// Ours may have landed wherever the SET was written and not refused, even where the reply timed out; the
		// nodes a lost round did not wait for got the release right behind it, and their late-reply thread sees to it
		boolean[] mayHoldOurs = new boolean[replies.length];
		boolean any = false;
		for (int i = 0; i < replies.length; i++) {
			mayHoldOurs[i] = replies[i].mayHoldWrite();
			any |= mayHoldOurs[i];
		}
		if (any) {
			NodeReply[] released = runScript(NodeCommand.RELEASE, LockScripts.RELEASE, key, mayHoldOurs, null, value);
			for (int i = 0; i < released.length; i++) {
				if (mayHoldOurs[i] && !released[i].isDefinite()) {
					this.cleanup.remove(i, key, value, expiresAt);
				}
			}
		}
		if (logger.isDebugEnabled()) {
			logger.debug("Lock '{}' not acquired: granted by {} of {} nodes, quorum {}", resource, granted,
					replies.length, this.quorum);
		}
		return new Attempt(null, replies, granted, start, end, validUntil);
	}

	/** The nodes a round wrote to, one bit per node index. */
	private static long writtenTo(NodeReply[] replies) {
		long written = 0;
		for (NodeReply reply : replies) {
			if (reply.written() && reply.node() < Long.SIZE) {
				written |= 1L << reply.node();
			}
		}
		return written;
	}

	/** The TTL as sent; the last one is kept, since a call site usually locks with the same TTL every time. */
	private RawArgument ttlArgument(long millis) {
		TtlArgument last = this.lastTtl;
		if (last == null || last.millis != millis) {
			last = new TtlArgument(millis, RawArgument.of(millis));
			this.lastTtl = last;
		}
		return last.argument;
	}

	private record TtlArgument(long millis, RawArgument argument) {
	}

	/** How many of the replies read so far are grants that count (a quarantined node's do not). */
	private int granted(NodeReply[] replies, boolean fenced) {
		int granted = 0;
		for (NodeReply reply : replies) {
			if (countingGrant(reply, fenced)) {
				granted++;
			}
		}
		return granted;
	}

	private boolean countingGrant(@Nullable NodeReply reply, boolean fenced) {
		// a quarantined node may have forgotten a lock someone else still holds: its grant proves nothing
		return reply != null && reply.isGrant(fenced) && this.quarantines.get(reply.node()).counts();
	}

	/**
	 * The second round of a fenced acquisition. The candidate token is the highest counter among the grants that
	 * count; it is written back to every node that still holds our value, as the floor of its counter. The token
	 * stands only if a quorum confirms it: any later holder's quorum then shares a node with this one, where its own
	 * increment must exceed the token.
	 * @return the token, or 0 if no quorum confirmed it
	 */
	private long confirmToken(RawArgument key, RawArgument value, NodeReply[] grants) {
		long candidate = 0;
		for (NodeReply reply : grants) {
			if (countingGrant(reply, true) && reply.value() instanceof Long counter) {
				candidate = Math.max(candidate, counter);
			}
		}
		if (!this.confirmTokens) {
			return candidate;
		}
		NodeReply[] replies = this.fanout.execute(
				fencingScript(LockScripts.RAISE_FENCE, key, value, RawArgument.of(candidate)), null);
		this.events.nodeReplies(NodeCommand.FENCE, replies, NodeReply::isOne);
		int confirmed = 0;
		for (NodeReply reply : replies) {
			if (reply.isOne() && this.quarantines.get(reply.node()).counts()) {
				confirmed++;
			}
		}
		return (confirmed >= this.quorum) ? candidate : 0;
	}

	void confirmTokens(boolean confirm) {
		this.confirmTokens = confirm;
	}

	/** A fencing script by its source (nobody retries after {@code NOSCRIPT}): the lock key, then its counter. */
	private static CommandArguments fencingScript(Script script, RawArgument key, RawArgument value,
			RawArgument argument) {
		return new CommandArguments(Command.EVAL).add(script.source())
			.add(LockScripts.TWO_KEYS)
			.add(key)
			.add(counterKey(key))
			.add(value)
			.add(argument);
	}

	/**
	 * The key of a resource's fencing counter: the lock key behind a {@code {fence}} prefix. It can never be another
	 * resource's lock key, since lock keys starting with that prefix are refused ({@link #keyFor}). It has no TTL.
	 */
	private static RawArgument counterKey(RawArgument lockKey) {
		byte[] prefix = FENCE_PREFIX;
		byte[] key = lockKey.getRaw();
		byte[] counter = new byte[prefix.length + key.length];
		System.arraycopy(prefix, 0, counter, 0, prefix.length);
		System.arraycopy(key, 0, counter, prefix.length, key.length);
		return RawArgument.wrap(counter);
	}

	/**
	 * Ends an acquisition round as soon as its outcome is known: a quorum has granted, or so many nodes refused
	 * (or failed) that no quorum is left. A slow node then delays neither a lock already won nor the retry of a lock
	 * already lost; when lost, the nodes not awaited get the release right behind the {@code SET}.
	 */
	private final class AcquireExit implements Fanout.EarlyExit {

		private final RawArgument key;

		private final RawArgument value;

		private final boolean fenced;

		private final long expiresAt;

		AcquireExit(RawArgument key, RawArgument value, boolean fenced, long expiresAt) {
			this.key = key;
			this.value = value;
			this.fenced = fenced;
			this.expiresAt = expiresAt;
		}

		@Override
		public boolean settled(NodeReply[] replies) {
			int granted = granted(replies, this.fenced);
			int answered = 0;
			for (NodeReply reply : replies) {
				if (reply != null) {
					answered++;
				}
			}
			int refused = answered - granted;
			return granted >= Redlock.this.quorum || refused > replies.length - Redlock.this.quorum;
		}

		@Override
		public @Nullable CommandArguments toNotAwaited(NodeReply[] replies) {
			if (granted(replies, this.fenced) >= Redlock.this.quorum) {
				// won: the lease's release goes to every node
				return null;
			}
			// by source, not digest: nobody reads this reply in time to retry after NOSCRIPT
			return scriptCommand(Command.EVAL, LockScripts.RELEASE.source(), this.key, this.value);
		}

		@Override
		public void lateReply(NodeReply reply, @Nullable NodeReply followUp) {
			Redlock.this.events.nodeReplies(NodeCommand.ACQUIRE, new NodeReply[] { reply },
					(late) -> late.isGrant(this.fenced));
			if (followUp != null && !reply.isNil() && !followUp.isDefinite()) {
				// a lost round's release did not reach a node that may hold our value (a won round's lease releases
				// on every node itself)
				Redlock.this.cleanup.remove(reply.node(), this.key, this.value, this.expiresAt);
			}
		}

	}

	/**
	 * Extends a lease on the nodes.
	 * @param ttl the new TTL, checked by {@link #usableTtl}
	 * @return whether it counts, and the validity deadline it gives; when it does not count, the deadline is still
	 * an upper bound: nodes may have taken the new TTL
	 */
	Extension extendOnNodes(Lease lease, RawArgument value, Duration ttl, long start, long currentValidUntil) {
		NodeReply[] replies = runScript(NodeCommand.EXTEND, LockScripts.EXTEND, lease.keyArgument(), null,
				new QuorumExit(NodeCommand.EXTEND, true, null), value, RawArgument.of(ttl.toMillis()));
		long end = this.ticker.getAsLong();
		int extended = 0;
		for (NodeReply reply : replies) {
			if (reply.isOne() && this.quarantines.get(reply.node()).counts()) {
				extended++;
			}
		}
		long newValidUntil = start + ttl.toNanos() - this.settings.driftFor(ttl).toNanos();
		boolean inTime = currentValidUntil - end > 0 && newValidUntil - end > 0;
		boolean counted = extended >= this.quorum && inTime;
		if (!counted) {
			logger.debug("Extension of '{}' does not count: confirmed by {} of {} nodes, in time: {}", lease.key(),
					extended, replies.length, inTime);
		}
		return new Extension(counted, newValidUntil);
	}

	/** Tells the listeners of an extension; never called under the lease's state lock. */
	void leaseExtended(Lease lease, ExtendOutcome outcome) {
		if (this.events.hasListeners()) {
			this.events.leaseExtended(new ExtendEvent(lease.name(), lease.resource(), outcome));
		}
	}

	/** Tells the listeners of a release; never called under the lease's state lock. */
	void leaseReleased(Lease lease, ReleaseOutcome outcome) {
		if (this.events.hasListeners()) {
			this.events.leaseReleased(new ReleaseEvent(lease.name(), lease.resource(), outcome, lease.heldFor()));
		}
	}

	void leaseLost(Lease lease, LossReason reason) {
		this.events.leaseLost(new LeaseLostEvent(lease.name(), lease.resource(), reason, lease.heldFor()));
	}

	RenewalScheduler renewals() {
		return this.renewals;
	}

	OnDemandThread lossCallbacks() {
		return this.lossCallbacks;
	}

	/**
	 * The result of an extension.
	 * @param counted whether a quorum confirmed it within the validity
	 * @param validUntil {@code start + ttl - drift} of the extension
	 */
	record Extension(boolean counted, long validUntil) {
	}

	/**
	 * Releases a lease on every node: deletes its key, or, when it must stay taken a while longer, cuts its TTL to
	 * that time.
	 * @param keepNanos how much longer the lock must stay taken; zero or less to delete it now
	 */
	ReleaseOutcome releaseOnNodes(Lease lease, RawArgument value, long keepNanos) {
		this.held.remove(lease);
		// PEXPIRE takes whole milliseconds: round up, so the lock is never kept for less than asked
		long keepMillis = (keepNanos <= 0) ? 0 : Math.max(1, (keepNanos + 999_999) / 1_000_000);
		ValueToRemove ours = new ValueToRemove(lease.keyArgument(), value, System.nanoTime() + lease.ttl().toNanos());
		NodeReply[] replies = (keepMillis == 0)
				? runScript(NodeCommand.RELEASE, LockScripts.RELEASE, lease.keyArgument(), null,
						new QuorumExit(NodeCommand.RELEASE, false, ours), value)
				: runScript(NodeCommand.RELEASE, LockScripts.EXTEND, lease.keyArgument(), null,
						new QuorumExit(NodeCommand.RELEASE, false, null), value, RawArgument.of(keepMillis));
		if (keepMillis == 0) {
			for (NodeReply reply : replies) {
				if (!reply.written() && lease.mayHoldValue(reply.node())) {
					// no connection in time: the release reaches it later
					this.cleanup.remove(reply.node(), ours.key(), ours.value(), ours.expiresAt());
				}
			}
		}
		int deleted = 0;
		int notOurs = 0;
		for (NodeReply reply : replies) {
			if (reply.isOne()) {
				deleted++;
			}
			else if (reply.kind() == NodeReply.Kind.REPLIED) {
				notOurs++;
			}
		}
		if (deleted >= this.quorum) {
			return ReleaseOutcome.RELEASED;
		}
		return (notOurs > replies.length - this.quorum) ? ReleaseOutcome.EXPIRED : ReleaseOutcome.UNKNOWN;
	}

	/**
	 * Checks every node at once with {@code INFO}, within the node timeout. What the nodes say about their uptime
	 * also feeds the restart quarantine.
	 * @return one status per node, in configuration order
	 */
	public List<NodeStatus> checkNodes() {
		NodeReply[] replies = this.fanout.execute(new CommandArguments(Command.INFO), null);
		this.events.nodeReplies(NodeCommand.PING, replies, (reply) -> true);
		List<NodeStatus> statuses = new ArrayList<>(replies.length);
		for (NodeReply reply : replies) {
			String node = this.nodes.get(reply.node()).redacted();
			Duration latency = Duration.ofNanos(reply.nanos());
			if (reply.kind() == NodeReply.Kind.REPLIED && reply.value() instanceof byte[] info) {
				Map<String, String> fields = InfoReply.parse(info);
				NodeQuarantine quarantine = this.quarantines.get(reply.node());
				quarantine.observe(fields);
				String uptime = fields.get("uptime_in_seconds");
				statuses.add(new NodeStatus(node, true, latency, fields.get("redis_version"), fields.get("role"),
						seconds(uptime),
						quarantine.remaining(), null));
			}
			else {
				statuses.add(new NodeStatus(node, false, latency, null, null, null,
						this.quarantines.get(reply.node()).remaining(), reply.describeFailure()));
			}
		}
		return statuses;
	}

	/**
	 * Checks the nodes and settings for misconfiguration, within about two node timeouts. Errors: one server listed
	 * twice under different addresses (the same {@code run_id}: it would fake a quorum), a node that is a replica.
	 * Warnings: fewer than 3 nodes or an even count, a node that cannot be reached now (a minority may be down at
	 * startup), a {@code maxmemory-policy} other than {@code noeviction} (lock keys carry a TTL, so even
	 * {@code volatile-*} policies may evict them), and a default TTL below 3 node timeouts.
	 * @return the findings, errors first; empty when all is well
	 */
	public List<NodeFinding> verifyNodes() {
		List<NodeFinding> errors = new ArrayList<>();
		List<NodeFinding> warnings = new ArrayList<>();
		int n = this.nodes.size();
		if (n < 3 || n % 2 == 0) {
			warnings.add(new NodeFinding(NodeFinding.Severity.WARNING, null, n + " nodes: list an odd number of at "
					+ "least 3 independent masters (3 or 5); with " + n + " a quorum of " + this.quorum
					+ " tolerates " + (n - this.quorum) + " failed nodes"));
		}
		if (this.settings.defaultTtl().compareTo(this.settings.nodeTimeout().multipliedBy(3)) < 0) {
			warnings.add(new NodeFinding(NodeFinding.Severity.WARNING, null, "defaultTtl " + this.settings.defaultTtl()
					+ " is below 3 node timeouts (" + this.settings.nodeTimeout() + " each): a slow round leaves "
					+ "little or no validity"));
		}
		// at startup every connection is new (TCP, TLS, AUTH): give the check more than one node timeout, so that
		// a server listed twice or a replica is found rather than reported as "cannot be checked"
		Fanout startup = new Fanout(this.pools, Math.max(this.settings.nodeTimeout().toNanos(), STARTUP_CHECK_NANOS));
		NodeReply[] infos = startup.execute(new CommandArguments(Command.INFO), null);
		NodeReply[] policies = startup.execute(
				new CommandArguments(Command.CONFIG).add("GET").add("maxmemory-policy"), null);
		Map<String, Integer> byRunId = new HashMap<>();
		List<Integer> refusingCredentials = new ArrayList<>();
		for (int i = 0; i < n; i++) {
			String node = this.nodes.get(i).redacted();
			NodeReply info = infos[i];
			if (info.kind() == NodeReply.Kind.AUTH_FAILED) {
				refusingCredentials.add(i);
				continue;
			}
			if (info.kind() == NodeReply.Kind.ERROR_REPLY && !this.settings.restartQuarantine().isZero()) {
				errors.add(new NodeFinding(NodeFinding.Severity.ERROR, i, node + " refuses INFO ("
						+ info.describeFailure() + "): the restart quarantine reads the node's uptime with it; grant "
						+ "the user +info, or turn the quarantine off (restartQuarantine 0) and run Redis with "
						+ "appendfsync always"));
				continue;
			}
			if (info.kind() != NodeReply.Kind.REPLIED || !(info.value() instanceof byte[] bytes)) {
				warnings.add(new NodeFinding(NodeFinding.Severity.WARNING, i,
						node + " cannot be checked now (" + info.describeFailure() + ")"));
				continue;
			}
			Map<String, String> fields = InfoReply.parse(bytes);
			String runId = fields.get("run_id");
			Integer first = (runId != null) ? byRunId.putIfAbsent(runId, i) : null;
			if (first != null) {
				errors.add(new NodeFinding(NodeFinding.Severity.ERROR, i, node + " is the same Redis server as nodes["
						+ first + "] (" + this.nodes.get(first).redacted() + "): both report run_id " + runId
						+ "; a server listed twice would fake a quorum, list independent masters"));
			}
			String role = fields.get("role");
			if (role != null && !role.equals("master")) {
				errors.add(new NodeFinding(NodeFinding.Severity.ERROR, i, node + " is a " + role
						+ ", not a master: a replica can lose locks on failover and is not independent of its "
						+ "master; list independent masters"));
			}
			String policy = configValue(policies[i]);
			if (policy != null && !policy.equals("noeviction")) {
				warnings.add(new NodeFinding(NodeFinding.Severity.WARNING, i, node + " has maxmemory-policy "
						+ policy + ": under memory pressure it may evict lock keys (they carry a TTL); use noeviction"));
			}
		}
		credentialFindings(refusingCredentials, infos, errors, warnings);
		errors.addAll(warnings);
		return errors;
	}

	/**
	 * Nodes that refuse our credentials: like nodes that are down while they are a minority (a warning each, and the
	 * others carry the locks), a configuration error once they are so many that no quorum is left.
	 */
	private void credentialFindings(List<Integer> refusing, NodeReply[] infos, List<NodeFinding> errors,
			List<NodeFinding> warnings) {
		if (refusing.size() > this.nodes.size() - this.quorum) {
			StringBuilder named = new StringBuilder();
			for (int i : refusing) {
				named.append((named.length() > 0) ? ", " : "")
					.append("nodes[")
					.append(i)
					.append("] ")
					.append(this.nodes.get(i).redacted())
					.append(" (")
					.append(infos[i].describeFailure())
					.append(")");
			}
			errors.add(new NodeFinding(NodeFinding.Severity.ERROR, null, refusing.size() + " of " + this.nodes.size()
					+ " nodes refuse our credentials, too many for a quorum of " + this.quorum + ": " + named
					+ "; check the user and password of these nodes"));
			return;
		}
		for (int i : refusing) {
			warnings.add(new NodeFinding(NodeFinding.Severity.WARNING, i, this.nodes.get(i).redacted()
					+ " refuses our credentials (" + infos[i].describeFailure() + "): it counts towards no quorum "
					+ "until its user and password are right; the other nodes carry the locks meanwhile"));
		}
	}

	private static @Nullable Duration seconds(@Nullable String text) {
		try {
			return (text != null) ? Duration.ofSeconds(Long.parseLong(text.trim())) : null;
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	/** The value of a {@code CONFIG GET} reply, or {@code null} when CONFIG is refused or renamed. */
	private static @Nullable String configValue(@Nullable NodeReply reply) {
		if (reply != null && reply.kind() == NodeReply.Kind.REPLIED && reply.value() instanceof List<?> pair
				&& pair.size() == 2 && pair.get(1) instanceof byte[] value) {
			return new String(value, StandardCharsets.UTF_8);
		}
		return null;
	}

	/**
	 * Returns the leases this instance holds now: acquired, not released, and still within their validity.
	 * @return a snapshot
	 */
	public List<Lease> heldLeases() {
		this.held.removeIf((lease) -> !lease.isValid());
		return List.copyOf(this.held);
	}

	/**
	 * Returns how each node has answered since this instance was built.
	 * @return one entry per node, in configuration order
	 */
	public List<NodeStatistics> nodeStatistics() {
		return this.events.statistics();
	}

	/**
	 * Runs a lock script by its digest, and by its source on the nodes that do not have it cached.
	 * @param exit when to stop waiting for the slower nodes; {@code null} to wait for all
	 */
	private NodeReply[] runScript(NodeCommand command, Script script, RawArgument key, boolean @Nullable [] selected,
			Fanout.@Nullable EarlyExit exit, RawArgument... args) {
		NodeReply[] replies = this.fanout.execute(scriptCommand(Command.EVALSHA, script.sha1(), key, args), selected,
				exit);
		boolean[] missing = null;
		for (int i = 0; i < replies.length; i++) {
			if (replies[i] != null && replies[i].isNoScript()) {
				if (missing == null) {
					missing = new boolean[replies.length];
				}
				missing[i] = true;
			}
		}
		if (missing != null) {
			NodeReply[] retried = this.fanout.execute(scriptCommand(Command.EVAL, script.source(), key, args), missing);
			for (int i = 0; i < replies.length; i++) {
				if (missing[i]) {
					replies[i] = retried[i];
				}
			}
		}
		this.events.nodeReplies(command, replies, NodeReply::isOne);
		return replies;
	}

	/**
	 * Ends a release or extension round once its outcome is known: a quorum confirmed it (a script answered 1), or
	 * so many nodes said the key is not ours that no quorum can. The slower nodes' replies are read off the caller's
	 * thread; a release that did not reach one of them is retried there until the value's TTL has passed.
	 */
	private final class QuorumExit implements Fanout.EarlyExit {

		private final NodeCommand command;

		/** Whether only nodes out of restart quarantine confirm (an extension must count on the quorum). */
		private final boolean countingOnly;

		private final @Nullable ValueToRemove toRemove;

		QuorumExit(NodeCommand command, boolean countingOnly, @Nullable ValueToRemove toRemove) {
			this.command = command;
			this.countingOnly = countingOnly;
			this.toRemove = toRemove;
		}

		@Override
		public boolean settled(NodeReply[] replies) {
			int confirmed = 0;
			int refused = 0;
			for (NodeReply reply : replies) {
				if (reply != null && reply.isDefinite()) {
					if (reply.isOne() && (!this.countingOnly || Redlock.this.quarantines.get(reply.node()).counts())) {
						confirmed++;
					}
					else {
						refused++;
					}
				}
			}
			return confirmed >= Redlock.this.quorum || refused > replies.length - Redlock.this.quorum;
		}

		@Override
		public @Nullable CommandArguments toNotAwaited(NodeReply[] replies) {
			return null;
		}

		@Override
		public void lateReply(NodeReply reply, @Nullable NodeReply followUp) {
			Redlock.this.events.nodeReplies(this.command, new NodeReply[] { reply }, NodeReply::isOne);
			if (this.toRemove != null && !reply.isDefinite()) {
				Redlock.this.cleanup.remove(reply.node(), this.toRemove.key(), this.toRemove.value(),
						this.toRemove.expiresAt());
			}
		}

	}

	/** A lock value to remove from the nodes a release did not reach, until it expires by itself. */
	private record ValueToRemove(RawArgument key, RawArgument value, long expiresAt) {
	}

	private static CommandArguments scriptCommand(Command command, RawArgument script, RawArgument key,
			RawArgument... args) {
		CommandArguments arguments = new CommandArguments(command).add(script).add(LockScripts.ONE_KEY).add(key);
		for (RawArgument arg : args) {
			arguments.add(arg);
		}
		return arguments;
	}

	private long nextRetryDelayNanos() {
		long mean = this.settings.retryDelay().toNanos();
		return mean / 2 + ThreadLocalRandom.current().nextLong(mean + 1);
	}

	private Duration elapsedSince(long start) {
		return Duration.ofNanos(Math.max(0, this.ticker.getAsLong() - start));
	}

	private LockNotAcquiredException interrupted(String resource, int attempts, long start,
			@Nullable InterruptedException cause) {
		return new LockNotAcquiredException(resource, Reason.INTERRUPTED, attempts, elapsedSince(start), List.of(),
				List.of(), cause);
	}

	/**
	 * Forms the Redis key of a resource, refusing it before any network call when it is empty or when the key, prefix
	 * included, is longer than the limit: the limit bounds what a caller (perhaps feeding user input into a key) can
	 * make every node store.
	 * @throws IllegalArgumentException if the resource is empty or the key too long
	 */
	private RawArgument keyFor(String resource) {
		if (resource == null || resource.isEmpty()) {
			throw new IllegalArgumentException("Lock resource name must not be null or empty");
		}
		int limit = this.settings.maxKeyLength();
		String key = this.settings.keyPrefix() + resource;
		// one byte or more per char: a key with more chars than the limit is refused without being encoded
		byte[] bytes = (key.length() > limit) ? null : key.getBytes(StandardCharsets.UTF_8);
		if (bytes == null || bytes.length > limit) {
			int atLeast = (bytes != null) ? bytes.length : key.length();
			String start = (resource.length() > 40) ? resource.substring(0, 40) + "…" : resource;
			throw new IllegalArgumentException("Lock key for resource '" + start + "' is longer than the limit of "
					+ limit + " bytes in UTF-8, key prefix included (maxKeyLength): at least " + atLeast + " bytes");
		}
		if (startsWith(bytes, FENCE_PREFIX)) {
			throw new IllegalArgumentException("Lock key '" + key + "' starts with " + LockScripts.FENCE_KEY_PREFIX
					+ ", which is reserved for fencing counters: use another resource name or key prefix");
		}
		return RawArgument.wrap(bytes);
	}

	private static boolean startsWith(byte[] bytes, byte[] prefix) {
		if (bytes.length < prefix.length) {
			return false;
		}
		for (int i = 0; i < prefix.length; i++) {
			if (bytes[i] != prefix[i]) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Checks a TTL and truncates it to what is sent to Redis (whole milliseconds), so validity is computed from the
	 * TTL the nodes actually apply.
	 * @throws IllegalArgumentException if the TTL is below 1 ms, within the clock drift allowance, longer than the
	 * restart quarantine (when it is on), or beyond the range of the monotonic clock (about 292 years)
	 */
	Duration usableTtl(Duration ttl) {
		if (ttl == null || ttl.isNegative() || ttl.compareTo(Duration.ofMillis(1)) < 0) {
			throw new IllegalArgumentException("Lock TTL must be at least 1 ms, was " + ttl);
		}
		toNanos(ttl, "Lock TTL");
		Duration millis = Duration.ofMillis(ttl.toMillis());
		Duration drift = this.settings.driftFor(millis);
		if (millis.compareTo(drift) <= 0) {
			throw new IllegalArgumentException("Lock TTL must be longer than the clock drift allowance of "
					+ drift.toMillis() + " ms, was " + ttl);
		}
		Duration quarantine = this.settings.restartQuarantine();
		if (!quarantine.isZero() && millis.compareTo(quarantine) > 0) {
			throw new IllegalArgumentException("Lock TTL must not exceed the restart quarantine of " + quarantine
					+ ", was " + ttl + ": a node that restarts counts again after the quarantine, and must not "
					+ "count while it may have forgotten a lock that is still valid (raise restartQuarantine, or "
					+ "turn it off and run Redis with appendfsync always)");
		}
		return millis;
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
		return this.nodes.stream().map(RedisNodeUri::redacted).toList();
	}

	/**
	 * Returns how many nodes must agree for a lock to be held.
	 * @return {@code N/2 + 1}
	 */
	public int quorum() {
		return this.quorum;
	}

	/**
	 * Stops renewing, then closes every connection. Leases still held can no longer be renewed or released: they are
	 * marked {@link Lease#isLost() lost} ({@link LossReason#REDLOCK_CLOSED}) and their {@link Lease#onLost(Runnable)
	 * callbacks} run on the calling thread; their keys expire on the nodes at the end of their TTL. Acquiring after
	 * close throws {@link IllegalStateException}. Closing again does nothing.
	 */
	@Override
	public void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		this.renewals.close();
		this.pools.forEach(NodeConnectionPool::close);
		for (Lease lease : this.held) {
			if (!lease.isReleased() && !lease.isLost()) {
				lease.markLost(LossReason.REDLOCK_CLOSED);
			}
		}
		this.held.clear();
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
	 * Returns how many times a {@link RedlockListener} threw. A listener's failure, whatever it throws, is logged (at
	 * most once a minute with its stack trace) and counted, and changes nothing else.
	 * @return the count since this instance was built
	 */
	public long listenerFailures() {
		return this.events.listenerFailures();
	}

	@Override
	public String toString() {
		return "Redlock" + nodeAddresses();
	}

	/** The result of one attempt. */
	private final class Attempt {

		private final @Nullable Lease lease;

		private final NodeReply[] replies;

		private final int granted;

		private final long start;

		private final long end;

		private final long validUntil;

		Attempt(@Nullable Lease lease, NodeReply[] replies, int granted, long start, long end, long validUntil) {
			this.lease = lease;
			this.replies = replies;
			this.granted = granted;
			this.start = start;
			this.end = end;
			this.validUntil = validUntil;
		}

		LockNotAcquiredException failure(String resource, int attempts, Duration waited) {
			List<String> taken = new ArrayList<>();
			List<String> failed = new ArrayList<>();
			for (NodeReply reply : this.replies) {
				if (reply.kind() == NodeReply.Kind.NOT_AWAITED) {
					continue;
				}
				String node = Redlock.this.nodes.get(reply.node()).redacted();
				Duration quarantined = Redlock.this.quarantines.get(reply.node()).remaining();
				if (reply.isNil()) {
					taken.add(node);
				}
				else if (reply.kind() != NodeReply.Kind.REPLIED) {
					failed.add(node + " (" + reply.describeFailure() + ")");
				}
				else if (!quarantined.isZero()) {
					failed.add(node + " (restarted recently: in restart quarantine for another "
							+ quarantined.toMillis() + " ms)");
				}
			}
			int couldGrant = this.replies.length - taken.size();
			Reason reason;
			if (this.granted >= Redlock.this.quorum) {
				reason = Reason.VALIDITY_EXHAUSTED;
			}
			else if (couldGrant < Redlock.this.quorum) {
				reason = Reason.CONTENDED;
			}
			else {
				reason = Reason.NO_QUORUM;
			}
			return new LockNotAcquiredException(resource, reason, attempts, waited, taken, failed, null);
		}

	}

	/**
	 * Builds a {@link Redlock} from node URIs and settings.
	 */
	public static final class Builder {

		private final List<String> nodes = new ArrayList<>();

		private RedlockSettings settings = RedlockSettings.defaults();

		private LongSupplier ticker = System::nanoTime;

		private final List<RedlockListener> listeners = new ArrayList<>();

		private TlsSettings tls = TlsSettings.jvmDefault();

		/**
		 * Sets how {@code rediss://} nodes are reached; the JVM's trust store with host name verification when not
		 * called.
		 * @param tls the TLS settings
		 * @return this builder
		 */
		public Builder tls(TlsSettings tls) {
			this.tls = Objects.requireNonNull(tls, "tls");
			return this;
		}

		private Builder() {
		}

		/**
		 * Adds a listener, told about every acquisition, release, extension and node request.
		 * @param listener the listener
		 * @return this builder
		 */
		public Builder listener(RedlockListener listener) {
			this.listeners.add(Objects.requireNonNull(listener, "listener"));
			return this;
		}

		/**
		 * Adds a node.
		 * @param uri {@code redis://[user:password@]host:port[/db]} or {@code rediss://…}
		 * @return this builder
		 */
		public Builder node(String uri) {
			this.nodes.add(uri);
			return this;
		}

		/**
		 * Adds nodes.
		 * @param uris node URIs, see {@link #node(String)}
		 * @return this builder
		 */
		public Builder nodes(List<String> uris) {
			this.nodes.addAll(uris);
			return this;
		}

		/**
		 * Sets the settings.
		 * @param settings the settings; {@link RedlockSettings#defaults()} when not called
		 * @return this builder
		 */
		public Builder settings(RedlockSettings settings) {
			this.settings = Objects.requireNonNull(settings, "settings");
			return this;
		}

		/**
		 * Sets the monotonic clock used for validity and wait times, for tests that need to control time.
		 * @param nanoTicker returns nanoseconds, like {@link System#nanoTime()} (the default)
		 * @return this builder
		 */
		public Builder ticker(LongSupplier nanoTicker) {
			this.ticker = Objects.requireNonNull(nanoTicker, "ticker");
			return this;
		}

		/**
		 * Checks the nodes and builds the instance. No connection is opened yet.
		 * @return a new {@code Redlock}
		 * @throws InvalidRedlockConfigurationException if there are no nodes, a URI is malformed, or one server is
		 * listed twice (which would fake a quorum)
		 */
		public Redlock build() {
			if (this.nodes.isEmpty()) {
				throw new InvalidRedlockConfigurationException("nodes",
						"no Redis nodes configured; list 3 or 5 independent Redis masters");
			}
			List<RedisNodeUri> parsed = new ArrayList<>(this.nodes.size());
			Map<String, Integer> seen = new HashMap<>();
			for (int i = 0; i < this.nodes.size(); i++) {
				RedisNodeUri node;
				try {
					node = RedisNodeUri.parse(this.nodes.get(i));
				}
				catch (IllegalArgumentException ex) {
					throw new InvalidRedlockConfigurationException("nodes[" + i + "]", ex.getMessage());
				}
				Integer first = seen.putIfAbsent(serverIdentity(node), i);
				if (first != null) {
					throw new InvalidRedlockConfigurationException("nodes[" + i + "]",
							node.redacted() + " is the same server as nodes[" + first + "] ("
									+ parsed.get(first).redacted()
									+ "); a node listed twice would fake a quorum, list independent masters");
				}
				parsed.add(node);
			}
			return new Redlock(parsed, this.settings, this.ticker, this.listeners, this.tls);
		}

		/** The server a URI points at: one Redis process, whatever its database index or host alias. */
		private static String serverIdentity(RedisNodeUri node) {
			String host = node.host().toLowerCase(Locale.ROOT);
			try {
				host = InetAddress.getByName(node.host()).getHostAddress();
			}
			catch (UnknownHostException ex) {
				// compare by name; the node will show as unreachable when used
			}
			return host + "|" + node.port();
		}

	}

}
