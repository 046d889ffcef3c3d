package dev.redlock.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.RedlockListener.ExtendOutcome;

/**
 * A lock held on a quorum of nodes, valid until its validity runs out. Closing it
 * releases the lock once; later calls return the first outcome.
 *
 * <pre>{@code
 * try (Lease lease = redlock.acquire("stock:42", Duration.ofSeconds(10), Duration.ofSeconds(2))) {
 *     // critical section; check lease.remainingValidity() before long steps
 * }
 * }</pre>
 *
 * <p>
 * Mutual exclusion holds only while {@link #remainingValidity()} is positive: work that
 * may outlast it should {@link #extend(Duration) extend} the lease in time, or let it
 * {@link #autoRenew() renew itself}. Once the lease is {@link #isLost() lost} (an
 * extension failed, the validity ran out before release, or release found the lock
 * expired) it stays lost, and the {@link #onLost(Runnable) callbacks} registered on it
 * run once.
 *
 * <p>
 * A lease is not tied to the thread that acquired it: it may be handed to other threads,
 * virtual threads or asynchronous tasks, and every method works there. Its methods are
 * thread-safe.
 */
public final class Lease implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(Lease.class);

	private final Redlock redlock;

	private final String name;

	private final String resource;

	private final RawArgument keyArgument;

	private final RawArgument value;

	/**
	 * The nodes the acquisition wrote to, one bit per node index (all bits from 64 on):
	 * only those may hold the value, so only those need a release that could not be
	 * written in time retried later.
	 */
	private final long writtenTo;

	/**
	 * The nodes whose acquisition reply was left to their late-reply thread, one bit per
	 * node index: a release sent on another connection could reach such a node before the
	 * {@code SET} it was not waited for.
	 */
	private final long answeredLate;

	/**
	 * The longest TTL the nodes were given for this lease, by the acquisition or an
	 * extension.
	 */
	private volatile long longestTtlNanos;

	/** The fencing token, 0 for a lease acquired without one. */
	private final long fencingToken;

	private final Duration ttl;

	private final LongSupplier ticker;

	private final long acquiredAtNanos;

	/**
	 * Wall-clock time of the acquisition, for display: a primitive, so a lease costs one
	 * object less.
	 */
	private final long acquiredAtEpochMillis = System.currentTimeMillis();

	private volatile long validUntilNanos;

	/** Start of the acquisition or of the last extension that counted. */
	private volatile long validatedAtNanos;

	private volatile int extensionAttempts;

	/**
	 * Extensions asked for by {@link #extend}, bounded by
	 * {@link RedlockSettings#maxExtensions()}.
	 */
	private volatile int explicitExtensions;

	private volatile @Nullable ReleaseOutcome releaseOutcome;

	/**
	 * Renews or watches this lease on the shared scheduler; guarded by this lease's state
	 * lock.
	 */
	private volatile @Nullable LeaseWatch watch;

	/**
	 * Guards extension, release and the watch. A lock rather than the monitor: these hold
	 * it across a network round, and a virtual thread waiting on a monitor would pin its
	 * carrier thread (JDK 21 to 23).
	 */
	private final ReentrantLock stateLock = new ReentrantLock();

	private final LossState loss;

	Lease(Redlock redlock, String name, String resource, RawArgument keyArgument, RawArgument value, Duration ttl,
			LongSupplier ticker, long acquiredAtNanos, long validUntilNanos, long fencingToken, long writtenTo,
			long answeredLate) {
		this.fencingToken = fencingToken;
		this.writtenTo = writtenTo;
		this.answeredLate = answeredLate;
		this.longestTtlNanos = ttl.toNanos();
		this.redlock = redlock;
		this.name = name;
		this.loss = new LossState(name);
		this.resource = resource;
		this.keyArgument = keyArgument;
		this.value = value;
		this.ttl = ttl;
		this.ticker = ticker;
		this.acquiredAtNanos = acquiredAtNanos;
		this.validatedAtNanos = acquiredAtNanos;
		this.validUntilNanos = validUntilNanos;
	}

	/**
	 * Returns the lock's name, as given to listeners and metrics.
	 * @return the name, {@link Redlock#DEFAULT_LOCK_NAME} when none was given
	 */
	public String name() {
		return this.name;
	}

	/**
	 * Returns when the lease was acquired, by the wall clock (for display; validity uses
	 * a monotonic clock).
	 * @return the moment of acquisition
	 */
	public Instant acquiredAt() {
		return Instant.ofEpochMilli(this.acquiredAtEpochMillis);
	}

	/**
	 * Returns the name of the locked resource, as given when it was acquired.
	 * @return the resource, without the key prefix
	 */
	public String resource() {
		return this.resource;
	}

	/**
	 * Returns the lease's fencing token, for a lease from {@link Redlock#acquireFenced}
	 * or {@link Redlock#tryAcquireFenced}: a number greater than that of every earlier
	 * fenced holder of the resource. Pass it to the store the lock protects with every
	 * write, and have the store refuse tokens lower than the highest it has seen: a
	 * holder that paused past its lease (and still believes it holds the lock) is then
	 * refused, whatever it believes.
	 *
	 * <p>
	 * How it is made: the acquisition's script increments a per-resource counter
	 * ({@code {fence}} + the lock key, no TTL) on each node that grants the lock; the
	 * candidate is the highest of those counters over the grants that count. A second
	 * round raises the counter to the candidate on every node that still holds this
	 * lease's value, and the token stands only if a quorum confirms it, within the
	 * validity. Every later holder's quorum shares at least one node with that quorum,
	 * whose counter it must push past the token. This holds as long as the counters are
	 * not lost: run the nodes with persistence ({@code appendfsync always}) and
	 * {@code maxmemory-policy noeviction}; a node restarted without its data may hand out
	 * old numbers (the restart quarantine does not cover counters). Extending the lease
	 * keeps its token.
	 * @return the token, or empty for a lease acquired without one
	 */
	public OptionalLong fencingToken() {
		return (this.fencingToken > 0) ? OptionalLong.of(this.fencingToken) : OptionalLong.empty();
	}

	/**
	 * Returns the Redis key of the lock.
	 * @return the key prefix followed by the resource
	 */
	public String key() {
		return this.keyArgument.toString();
	}

	/**
	 * Whether the acquisition wrote to the node, so that it may hold this lease's value.
	 */
	boolean mayHoldValue(int node) {
		return node >= Long.SIZE || (this.writtenTo & (1L << node)) != 0;
	}

	/**
	 * Whether the acquisition's reply from the node was left to its late-reply thread.
	 */
	boolean answeredLate(int node) {
		return node >= Long.SIZE || (this.answeredLate & (1L << node)) != 0;
	}

	/**
	 * The longest TTL the nodes were given for this lease: its value is gone from every
	 * node that long after now.
	 */
	long longestTtlNanos() {
		return this.longestTtlNanos;
	}

	/** The key as sent to the nodes. */
	RawArgument keyArgument() {
		return this.keyArgument;
	}

	/**
	 * Returns the time-to-live the lock was acquired with.
	 * @return the TTL
	 */
	public Duration ttl() {
		return this.ttl;
	}

	/**
	 * Returns how long this lease has been held.
	 * @return the time since the acquisition started
	 */
	public Duration heldFor() {
		return Duration.ofNanos(this.ticker.getAsLong() - this.acquiredAtNanos);
	}

	/**
	 * Returns how long mutual exclusion is still guaranteed: the TTL minus the time the
	 * acquisition (or the last extension) took, minus the clock drift allowance, minus
	 * the time since.
	 * @return the remaining validity, zero once it ran out, the lease was lost or
	 * released
	 */
	public Duration remainingValidity() {
		if (isReleased() || this.loss.isLost()) {
			return Duration.ZERO;
		}
		long left = this.validUntilNanos - this.ticker.getAsLong();
		return (left > 0) ? Duration.ofNanos(left) : Duration.ZERO;
	}

	/**
	 * Returns whether the lease is unreleased, not lost and within its validity.
	 * @return {@code true} while the lock is guaranteed to be held
	 */
	public boolean isValid() {
		return !remainingValidity().isZero();
	}

	/**
	 * Returns whether {@link #release()} or {@link #close()} has been called.
	 * @return {@code true} once released
	 */
	public boolean isReleased() {
		return this.releaseOutcome != null;
	}

	/**
	 * Returns how many times an extension was attempted.
	 * @return the number of {@link #extend} calls that reached the nodes
	 */
	public int extensionAttempts() {
		return this.extensionAttempts;
	}

	/**
	 * Extends the lease by its original TTL. See {@link #extend(Duration)}.
	 * @return {@code true} if extended
	 */
	public boolean extend() {
		return extend(this.ttl);
	}

	/**
	 * Sets a new TTL on the nodes that still hold this lease's value. The extension
	 * counts only if a quorum of nodes confirmed it before the current validity ran out;
	 * then the validity becomes {@code ttl} minus the time the extension took minus the
	 * drift allowance. An expired lock is never re-created: once the validity is over,
	 * this returns {@code false} without contacting the nodes. An extension that does not
	 * count marks the lease {@link #isLost() lost}: it is not extended again, and its
	 * validity is zero from then on.
	 * @param ttl the new time-to-live, counted from now
	 * @return {@code true} if extended
	 * @throws IllegalStateException if the lease was released, or was extended (by calls
	 * of this method; automatic renewal is bounded by its {@code maxHold} instead) as
	 * many times as {@link RedlockSettings#maxExtensions()} allows
	 * @throws IllegalArgumentException if the TTL is below 1 ms or within the clock drift
	 * allowance
	 */
	public boolean extend(Duration ttl) {
		ExtendOutcome outcome = extendHeld(ttl, false);
		this.redlock.leaseExtended(this, outcome);
		if (outcome != ExtendOutcome.EXTENDED) {
			markLost((outcome == ExtendOutcome.EXPIRED) ? LossReason.VALIDITY_RAN_OUT : LossReason.EXTENSION_FAILED);
		}
		return outcome == ExtendOutcome.EXTENDED;
	}

	/**
	 * Extends the lease under its state lock; the caller tells the listeners and signals
	 * a loss after leaving it, so that neither listeners nor loss callbacks ever run
	 * while the lease is locked.
	 * @param renewal whether automatic renewal asks (bounded by its {@code maxHold}),
	 * rather than {@link #extend} (bounded by {@link RedlockSettings#maxExtensions()})
	 */
	ExtendOutcome extendHeld(Duration ttl, boolean renewal) {
		this.stateLock.lock();
		try {
			return extendLocked(ttl, renewal);
		}
		finally {
			this.stateLock.unlock();
		}
	}

	private ExtendOutcome extendLocked(Duration ttl, boolean renewal) {
		if (this.releaseOutcome != null) {
			throw new IllegalStateException("Lease on '" + this.resource + "' was already released");
		}
		int max = this.redlock.settings().maxExtensions();
		if (!renewal && this.explicitExtensions >= max) {
			throw new IllegalStateException("Lease on '" + this.resource + "' was already extended " + max
					+ " times, the most allowed (maxExtensions); acquire the lock again instead");
		}
		Duration lockTtl = this.redlock.usableTtl(ttl);
		long start = this.ticker.getAsLong();
		long current = this.validUntilNanos;
		if (current - start <= 0 || this.loss.isLost()) {
			return ExtendOutcome.EXPIRED;
		}
		this.extensionAttempts++;
		this.longestTtlNanos = Math.max(this.longestTtlNanos, lockTtl.toNanos());
		if (!renewal) {
			this.explicitExtensions++;
		}
		NodeGroup.Extension extension = this.redlock.extendOnNodes(this, this.value, lockTtl, start, current);
		if (extension.counted()) {
			this.validUntilNanos = extension.validUntil();
			this.validatedAtNanos = start;
			return ExtendOutcome.EXTENDED;
		}
		if (extension.validUntil() - current < 0) {
			this.validUntilNanos = extension.validUntil();
		}
		return ExtendOutcome.FAILED;
	}

	/**
	 * Renews the lease automatically, bounded by {@link RedlockSettings#maxHold()}. See
	 * {@link #autoRenew(Duration)}.
	 * @return this lease
	 */
	public Lease autoRenew() {
		return autoRenew(this.redlock.settings().maxHold());
	}

	/**
	 * Renews the lease automatically until it is released: whenever a third of its TTL
	 * has passed since the acquisition or the last extension, it is {@link #extend()
	 * extended} by its TTL from the {@link Redlock}'s one renewal thread. Renewal stops
	 * when the lease is released (release cancels it first), when it has been held for
	 * {@code maxHold} (then the lease runs out at the end of its last extension, at most
	 * {@code maxHold + ttl} after acquisition, and the loss is signalled then), and at
	 * the first extension that fails, which marks the lease {@link #isLost() lost} at
	 * once. {@code maxHold} is the one bound of renewal: renewals do not count towards
	 * {@link RedlockSettings#maxExtensions()}, which bounds calls of {@link #extend}.
	 * Calling it again while renewal runs changes nothing. <pre>{@code
	 * try (Lease lease = redlock.acquire("report", Duration.ofSeconds(30), Duration.ZERO).autoRenew()) {
	 *     lease.onLost(report::abort);
	 *     report.build(); // may take longer than 30 s
	 * }
	 * }</pre>
	 * @param maxHold the longest time the lease is kept alive, counted from its
	 * acquisition
	 * @return this lease
	 * @throws IllegalStateException if the lease was released, or its {@code Redlock}
	 * closed
	 * @throws IllegalArgumentException if {@code maxHold} is not positive
	 */
	public Lease autoRenew(Duration maxHold) {
		if (maxHold == null || maxHold.isNegative() || maxHold.isZero()) {
			throw new IllegalArgumentException("maxHold must be positive, was " + maxHold);
		}
		long maxHoldNanos = LockArguments.toNanos(maxHold, "maxHold");
		if (this.redlock.isClosed()) {
			throw new IllegalStateException(
					"Lease on '" + this.resource + "' cannot be renewed: its Redlock is closed");
		}
		if (isLost()) {
			return this;
		}
		this.stateLock.lock();
		try {
			if (this.releaseOutcome != null) {
				throw new IllegalStateException("Lease on '" + this.resource + "' was already released");
			}
			LeaseWatch current = this.watch;
			if (current != null && current.isRenewing()) {
				return this;
			}
			if (current != null) {
				current.cancel();
			}
			LeaseWatch renewal = LeaseWatch.renewing(this, this.redlock.renewals(),
					this.acquiredAtNanos + maxHoldNanos);
			// started first: on a closed Redlock start() throws and the lease must not
			// look renewed
			renewal.start();
			this.watch = renewal;
		}
		finally {
			this.stateLock.unlock();
		}
		return this;
	}

	/**
	 * Returns whether the lease is being renewed automatically now.
	 * @return {@code true} between {@link #autoRenew()} and the end of renewal (release,
	 * loss, {@code maxHold})
	 */
	public boolean isAutoRenewing() {
		LeaseWatch current = this.watch;
		return current != null && current.isRenewing();
	}

	/**
	 * Returns whether this lease was lost: an extension or renewal did not count, the
	 * validity ran out before the lease was released, or the release found that the lock
	 * had expired on the nodes. Work done under a lost lease may have overlapped with
	 * another holder's; stop it, or make it safe to repeat. Once lost, a lease stays
	 * lost. Detecting a loss here runs the {@link #onLost(Runnable) callbacks} on the
	 * calling thread.
	 * @return {@code true} once lost
	 */
	public boolean isLost() {
		if (!this.loss.isLost() && this.releaseOutcome == null && this.validUntilNanos - this.ticker.getAsLong() <= 0) {
			markLost(LossReason.VALIDITY_RAN_OUT);
		}
		return this.loss.isLost();
	}

	/**
	 * Returns why this lease was lost.
	 * @return the reason, empty while the lease is not known to be lost
	 */
	public Optional<LossReason> lossReason() {
		return Optional.ofNullable(this.loss.reason());
	}

	/**
	 * Registers a callback for the loss of this lease. It runs once, on whichever thread
	 * detects the loss: the renewal thread, a thread calling {@link #extend},
	 * {@link #isLost()} or {@link #release()}, or the renewal thread at the end of the
	 * validity (registering a callback makes the {@code Redlock}'s renewal thread watch
	 * an unrenewed lease for that). Registered after the loss, it runs at once on the
	 * calling thread. Keep callbacks short and non-blocking; one that throws is logged
	 * and ignored. A lease released in time never calls them.
	 * @param callback what to run on loss, e.g. setting a flag the work checks, or
	 * cancelling a task
	 * @return this lease
	 */
	public Lease onLost(Runnable callback) {
		Objects.requireNonNull(callback, "callback");
		if (isLost() || !this.loss.register(callback)) {
			this.loss.run(callback);
			return this;
		}
		boolean redlockClosed = false;
		this.stateLock.lock();
		try {
			if (this.releaseOutcome == null && this.watch == null) {
				LeaseWatch expiry = LeaseWatch.watching(this, this.redlock.renewals());
				try {
					expiry.start();
					this.watch = expiry;
				}
				catch (IllegalStateException ex) {
					// closed meanwhile: nobody could watch the lease any more
					redlockClosed = true;
				}
			}
		}
		finally {
			this.stateLock.unlock();
		}
		if (redlockClosed) {
			markLost(LossReason.REDLOCK_CLOSED);
		}
		return this;
	}

	/**
	 * Marks the lease lost, once: tells the listeners, then runs the callbacks on the
	 * calling thread. Never call it while holding this lease's state lock.
	 */
	void markLost(LossReason reason) {
		markLost(reason, null);
	}

	/**
	 * Marks the lease lost, once: tells the listeners, then runs the callbacks.
	 * @param callbackThread where the callbacks run; {@code null} for the calling thread
	 */
	void markLost(LossReason reason, @Nullable OnDemandThread callbackThread) {
		List<Runnable> callbacks = this.loss.set(reason);
		if (callbacks == null) {
			return;
		}
		LeaseWatch current = this.watch;
		if (current != null) {
			current.cancel();
		}
		this.redlock.leaseLost(this, reason);
		this.loss.run(callbacks, callbackThread);
	}

	long validatedAtNanos() {
		return this.validatedAtNanos;
	}

	ReentrantLock stateLock() {
		return this.stateLock;
	}

	long validUntilNanos() {
		return this.validUntilNanos;
	}

	long acquiredAtNanos() {
		return this.acquiredAtNanos;
	}

	LongSupplier ticker() {
		return this.ticker;
	}

	Redlock redlock() {
		return this.redlock;
	}

	/**
	 * Releases the lock on every node that still holds this lease's value. Automatic
	 * renewal is cancelled first. Runs once; later calls return the first outcome without
	 * contacting the nodes. Never throws because of the nodes: failures show in the
	 * outcome. A lease whose validity had run out, or that the nodes no longer held
	 * ({@link ReleaseOutcome#EXPIRED}), is marked {@link #isLost() lost}.
	 * @return what the nodes said
	 */
	public ReleaseOutcome release() {
		return release(Duration.ZERO);
	}

	/**
	 * Releases the lock, but not before it has been held for {@code minimumHold} since
	 * its acquisition: when less time has passed, the key's TTL on the nodes is set to
	 * the rest of that time instead (compare-and-{@code PEXPIRE}; at most the lease's
	 * TTL, which bounds {@code minimumHold}), so the lock runs out by itself then. This
	 * is how a job run on one instance keeps others, whose clocks or schedules are a
	 * little behind, from running the same tick again. Otherwise like {@link #release()}.
	 * @param minimumHold the least time the lock stays taken, counted from its
	 * acquisition; zero to release at once
	 * @return what the nodes said: {@link ReleaseOutcome#RELEASED} when a quorum deleted
	 * the key or took the shorter TTL
	 * @throws IllegalArgumentException if {@code minimumHold} is negative
	 */
	public ReleaseOutcome release(Duration minimumHold) {
		if (minimumHold == null || minimumHold.isNegative()) {
			throw new IllegalArgumentException("minimumHold must be zero or positive, was " + minimumHold);
		}
		long minimumHoldNanos = LockArguments.toNanos(minimumHold, "minimumHold");
		LeaseWatch current = this.watch;
		if (current != null) {
			current.cancel();
		}
		boolean ranOut = false;
		ReleaseOutcome outcome = null;
		this.stateLock.lock();
		try {
			if (this.releaseOutcome == null) {
				current = this.watch;
				if (current != null) {
					current.cancel();
				}
				ranOut = this.validUntilNanos - this.ticker.getAsLong() <= 0;
				outcome = ReleaseOutcome.UNKNOWN;
				try {
					long keepNanos = Math.min(this.ttl.toNanos(),
							minimumHoldNanos - (this.ticker.getAsLong() - this.acquiredAtNanos));
					outcome = this.redlock.releaseOnNodes(this, this.value, keepNanos);
				}
				finally {
					// even if releasing failed unexpectedly, this lease is done: its keys
					// expire with their TTL
					this.releaseOutcome = outcome;
				}
			}
			else {
				return this.releaseOutcome;
			}
		}
		finally {
			this.stateLock.unlock();
			if (outcome != null) {
				// outside the lock: a listener may touch this lease
				this.redlock.leaseReleased(this, outcome);
			}
		}
		if (ranOut) {
			markLost(LossReason.VALIDITY_RAN_OUT);
		}
		else if (outcome == ReleaseOutcome.EXPIRED) {
			markLost(LossReason.FOUND_EXPIRED);
		}
		return outcome;
	}

	/**
	 * Releases the lock, as {@link #release()}.
	 */
	@Override
	public void close() {
		release();
	}

	@Override
	public String toString() {
		return "Lease[name=" + this.name + ", resource=" + this.resource + ", remainingValidity="
				+ remainingValidity().toMillis() + "ms]";
	}

}
