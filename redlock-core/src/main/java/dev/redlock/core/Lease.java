package dev.redlock.core;

import java.time.Duration;
import java.time.Instant;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

/**
 * A lock held on a quorum of nodes, valid until its validity runs out. Closing it releases the lock once; later
 * calls return the first outcome.
 *
 * <pre>{@code
 * try (Lease lease = redlock.acquire("stock:42", Duration.ofSeconds(10), Duration.ofSeconds(2))) {
 *     // critical section; check lease.remainingValidity() before long steps
 * }
 * }</pre>
 *
 * <p>Mutual exclusion holds only while {@link #remainingValidity()} is positive: work that may outlast it should
 * {@link #extend(Duration) extend} the lease in time. A lease is not tied to the thread that acquired it.
 */
public final class Lease implements AutoCloseable {

	private final Redlock redlock;

	private final String name;

	private final String resource;

	private final String key;

	private final String value;

	private final Duration ttl;

	private final LongSupplier ticker;

	private final long acquiredAtNanos;

	private final Instant acquiredAt = Instant.now();

	private volatile long validUntilNanos;

	private int extensionAttempts;

	private volatile @Nullable ReleaseOutcome releaseOutcome;

	Lease(Redlock redlock, String name, String resource, String key, String value, Duration ttl, LongSupplier ticker,
			long acquiredAtNanos, long validUntilNanos) {
		this.redlock = redlock;
		this.name = name;
		this.resource = resource;
		this.key = key;
		this.value = value;
		this.ttl = ttl;
		this.ticker = ticker;
		this.acquiredAtNanos = acquiredAtNanos;
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
	 * Returns when the lease was acquired, by the wall clock (for display; validity uses a monotonic clock).
	 * @return the moment of acquisition
	 */
	public Instant acquiredAt() {
		return this.acquiredAt;
	}

	/**
	 * Returns the name of the locked resource, as given when it was acquired.
	 * @return the resource, without the key prefix
	 */
	public String resource() {
		return this.resource;
	}

	/**
	 * Returns the Redis key of the lock.
	 * @return the key prefix followed by the resource
	 */
	public String key() {
		return this.key;
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
	 * Returns how long mutual exclusion is still guaranteed: the TTL minus the time the acquisition (or the last
	 * extension) took, minus the clock drift allowance, minus the time since.
	 * @return the remaining validity, zero once it ran out or the lease was released
	 */
	public Duration remainingValidity() {
		if (isReleased()) {
			return Duration.ZERO;
		}
		long left = this.validUntilNanos - this.ticker.getAsLong();
		return (left > 0) ? Duration.ofNanos(left) : Duration.ZERO;
	}

	/**
	 * Returns whether the lease is unreleased and within its validity.
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
	public synchronized int extensionAttempts() {
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
	 * Sets a new TTL on the nodes that still hold this lease's value. The extension counts only if a quorum of
	 * nodes confirmed it before the current validity ran out; then the validity becomes {@code ttl} minus the time
	 * the extension took minus the drift allowance. An expired lock is never re-created: once the validity is over,
	 * this returns {@code false} without contacting the nodes. When the extension fails, the lease keeps its
	 * previous validity, or the new one if that is shorter (some nodes may have applied the new TTL).
	 * @param ttl the new time-to-live, counted from now
	 * @return {@code true} if extended
	 * @throws IllegalStateException if the lease was released, or was extended as many times as
	 * {@link RedlockSettings#maxExtensions()} allows
	 * @throws IllegalArgumentException if the TTL is below 1 ms or within the clock drift allowance
	 */
	public synchronized boolean extend(Duration ttl) {
		if (this.releaseOutcome != null) {
			throw new IllegalStateException("Lease on '" + this.resource + "' was already released");
		}
		int max = this.redlock.settings().maxExtensions();
		if (this.extensionAttempts >= max) {
			throw new IllegalStateException("Lease on '" + this.resource + "' was already extended " + max
					+ " times, the most allowed (maxExtensions); acquire the lock again instead");
		}
		Duration lockTtl = this.redlock.usableTtl(ttl);
		long start = this.ticker.getAsLong();
		long current = this.validUntilNanos;
		if (current - start <= 0) {
			this.redlock.leaseExtended(this, RedlockListener.ExtendOutcome.EXPIRED);
			return false;
		}
		this.extensionAttempts++;
		Redlock.Extension extension = this.redlock.extendOnNodes(this, this.value, lockTtl, start, current);
		if (extension.counted()) {
			this.validUntilNanos = extension.validUntil();
			return true;
		}
		if (extension.validUntil() - current < 0) {
			this.validUntilNanos = extension.validUntil();
		}
		return false;
	}

	/**
	 * Releases the lock on every node that still holds this lease's value. Runs once; later calls return the first
	 * outcome without contacting the nodes. Never throws because of the nodes: failures show in the outcome.
	 * @return what the nodes said
	 */
	public synchronized ReleaseOutcome release() {
		if (this.releaseOutcome == null) {
			ReleaseOutcome outcome = ReleaseOutcome.UNKNOWN;
			try {
				outcome = this.redlock.releaseOnNodes(this, this.value);
			}
			finally {
				// even if releasing failed unexpectedly, this lease is done: its keys expire with their TTL
				this.releaseOutcome = outcome;
			}
		}
		return this.releaseOutcome;
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
		return "Lease[name=" + this.name + ", resource=" + this.resource + ", remainingValidity=" + remainingValidity().toMillis() + "ms]";
	}

}
