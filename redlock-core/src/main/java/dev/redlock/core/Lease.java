package dev.redlock.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

import dev.redlock.core.internal.lease.LeaseState;

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

	private final LeaseState state;

	/** The fencing token, 0 for a lease acquired without one. */
	private final long fencingToken;

	/**
	 * Wall-clock time of the acquisition, for display: a primitive, so a lease costs one
	 * object less.
	 */
	private final long acquiredAtEpochMillis = System.currentTimeMillis();

	Lease(LeaseState state, long fencingToken) {
		this.state = state;
		this.fencingToken = fencingToken;
	}

	/**
	 * Returns the lock's name, as given to listeners and metrics.
	 * @return the name, {@link Redlock#DEFAULT_LOCK_NAME} when none was given
	 */
	public String name() {
		return this.state.name();
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
		return this.state.resource();
	}

	/**
	 * Returns the lease's fencing token, for a lease of a {@link LockRequest#fenced()
	 * fenced request}: a number greater than that of every earlier fenced holder of the
	 * resource. Pass it to the store the lock protects with every write, and have the
	 * store refuse tokens lower than the highest it has seen: a holder that paused past
	 * its lease (and still believes it holds the lock) is then refused, whatever it
	 * believes.
	 *
	 * <p>
	 * How it is made: each node that grants the lock raises its per-resource counter
	 * ({@code {fence}} + the lock key, no TTL) by one in the same step; the token is the
	 * highest count over the grants that count. When a quorum of them counted it, it
	 * stands; else (counters out of step) a second round raises the counter to it on
	 * every node that still holds this lease's value, and the token stands only if a
	 * quorum confirms it, within the validity. Every later holder's quorum shares at
	 * least one node with that quorum, where the counter already holds the token when the
	 * later grant raises it, so the later token exceeds it. This holds as long as the
	 * counters are not lost: run the nodes with persistence ({@code appendfsync always})
	 * and {@code maxmemory-policy noeviction}. With the restart quarantine on, a node
	 * found to have forgotten them counts in fenced acquisitions only once its counters
	 * are re-seeded from the other nodes; without it, a node restarted without its data
	 * may hand out old numbers. Extending the lease keeps its token.
	 * @return the token, or empty for a lease acquired without one
	 */
	public OptionalLong fencingToken() {
		return (this.fencingToken > 0) ? OptionalLong.of(this.fencingToken) : OptionalLong.empty();
	}

	/**
	 * Returns the Redis key of the lock: what {@code @DistributedLock(key = ...)} and
	 * {@link LockRequest#resource()} call the resource, with the key prefix in front.
	 * When some voter has several shard nodes, that key is stored inside a hash tag
	 * ({@code {redlock:orders:42}}), so that the lock and its fencing counter share a
	 * slot; this returns the key as stored.
	 * @return the key prefix followed by the resource, as the nodes store it
	 */
	public String redisKey() {
		return this.state.key().toString();
	}

	/**
	 * Returns the time-to-live the lock was acquired with.
	 * @return the TTL
	 */
	public Duration ttl() {
		return this.state.ttl();
	}

	/**
	 * Returns how long this lease has been held.
	 * @return the time since the acquisition started
	 */
	public Duration heldFor() {
		return this.state.heldFor();
	}

	/**
	 * Returns how long mutual exclusion is still guaranteed: the TTL minus the time the
	 * acquisition (or the last extension) took, minus the clock drift allowance, minus
	 * the time since.
	 * @return the remaining validity, zero once it ran out, the lease was lost or
	 * released
	 */
	public Duration remainingValidity() {
		return this.state.remainingValidity();
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
		return this.state.isReleased();
	}

	/**
	 * Returns how many times an extension was attempted, automatic renewals included.
	 * @return the number of extensions and renewals sent to the nodes
	 */
	public int extensionAttempts() {
		return this.state.extensionAttempts();
	}

	/**
	 * Extends the lease by its original TTL. See {@link #extend(Duration)}.
	 * @return {@code true} if extended
	 */
	public boolean extend() {
		return extend(ttl());
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
	 * @throws IllegalArgumentException if the TTL is below 1 ms, within the clock drift
	 * allowance, or longer than the restart quarantine (when it is on): renew instead
	 * ({@link #autoRenew(Duration)})
	 */
	public boolean extend(Duration ttl) {
		return this.state.extend(ttl);
	}

	/**
	 * Renews the lease automatically, bounded by {@link RedlockSettings#maxHold()}. See
	 * {@link #autoRenew(Duration)}.
	 * @return this lease
	 */
	public Lease autoRenew() {
		return autoRenew(this.state.maxHold());
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
	 * Calling it again with another {@code maxHold} moves the bound. <pre>{@code
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
		this.state.autoRenew(maxHold);
		return this;
	}

	/**
	 * Stops automatic renewal: the lease then runs out at the end of its current validity
	 * unless extended or released. Does nothing when it is not renewed.
	 * @return this lease
	 */
	public Lease stopAutoRenew() {
		this.state.stopAutoRenew();
		return this;
	}

	/**
	 * Returns whether the lease is being renewed automatically now.
	 * @return {@code true} between {@link #autoRenew()} and the end of renewal (release,
	 * loss, {@code maxHold})
	 */
	public boolean isAutoRenewing() {
		return this.state.isAutoRenewing();
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
		return this.state.isLost();
	}

	/**
	 * Returns why this lease was lost.
	 * @return the reason, empty while the lease is not known to be lost
	 */
	public Optional<LossReason> lossReason() {
		return Optional.ofNullable(this.state.lossReason());
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
		this.state.onLost(Objects.requireNonNull(callback, "callback"));
		return this;
	}

	/**
	 * Marks the lease lost, once: tells the listeners, then runs the callbacks on the
	 * calling thread.
	 */
	void markLost(LossReason reason) {
		this.state.markLost(reason, null);
	}

	/**
	 * Releases the lock on every node that still holds this lease's value. Automatic
	 * renewal is cancelled first. Runs once; later calls return the first outcome without
	 * contacting the nodes. Never throws because of the nodes: failures show in the
	 * outcome. A lease whose validity had run out, or that the nodes no longer held
	 * ({@link ReleaseOutcome#EXPIRED}), is marked {@link #isLost() lost}.
	 * <p>
	 * When many threads release leases of one {@code Redlock} at once, their releases go
	 * to the nodes together: a release asked for while two release rounds are out waits
	 * for one of them to end, then goes with the others that waited, in one round, each
	 * still decided by its own nodes' answers. A lone caller never waits.
	 * @return what the nodes said
	 */
	public ReleaseOutcome release() {
		return release(Duration.ZERO);
	}

	/**
	 * Releases the lock, but not before it has been held for {@code minHold} since its
	 * acquisition: when less time has passed, the key's TTL on the nodes is set to the
	 * rest of that time instead (compare-and-{@code PEXPIRE}; never beyond the expiry the
	 * nodes were last given), so the lock runs out by itself then. This is how a job run
	 * on one instance keeps others, whose clocks or schedules are a little behind, from
	 * running the same tick again. Otherwise like {@link #release()}.
	 * @param minHold the least time the lock stays taken, counted from its acquisition;
	 * zero to release at once
	 * @return what the nodes said: {@link ReleaseOutcome#RELEASED} when a quorum deleted
	 * the key or took the shorter TTL
	 * @throws IllegalArgumentException if {@code minHold} is negative
	 */
	public ReleaseOutcome release(Duration minHold) {
		return this.state.release(this, minHold);
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
		return "Lease[name=" + name() + ", resource=" + resource() + ", remainingValidity="
				+ remainingValidity().toMillis() + "ms]";
	}

}
