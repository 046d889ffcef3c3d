package dev.redlock.core.internal.lease;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.LossReason;
import dev.redlock.core.RedlockListener.ExtendOutcome;
import dev.redlock.core.RedlockSettings;
import dev.redlock.core.ReleaseOutcome;
import dev.redlock.core.internal.ExtensionRequest;
import dev.redlock.core.internal.HeldValue;
import dev.redlock.core.internal.LockArguments;
import dev.redlock.core.internal.ScriptRounds;
import dev.redlock.core.internal.protocol.RawArgument;
import dev.redlock.core.internal.thread.OnDemandThread;

/**
 * The changing state of a {@code Lease} and the rules that change it: validity,
 * extension, release, renewal, loss. {@code Lease} is its public face.
 *
 * <p>
 * Extension, release and the watch are guarded by one lock, held across their network
 * round; listeners are told and loss callbacks run only after it is left, so that they
 * may touch the lease.
 */
public final class LeaseState implements LeaseWatch.Target {

	private final LeaseSupport support;

	private final String name;

	private final String resource;

	private final HeldValue held;

	private final Duration ttl;

	private final LongSupplier ticker;

	private final long acquiredAtNanos;

	/**
	 * The longest TTL the nodes were given for this lease, by the acquisition or an
	 * extension: its value is gone from every node that long after now.
	 */
	private volatile long longestTtlNanos;

	private volatile long validUntilNanos;

	/** Start of the acquisition or of the last extension that counted. */
	private volatile long validatedAtNanos;

	/** The TTL the acquisition or the last extension that counted gave the nodes. */
	private volatile long currentTtlNanos;

	private volatile int extensionAttempts;

	/**
	 * Extensions asked for by {@code Lease.extend}, bounded by
	 * {@link RedlockSettings#maxExtensions()}.
	 */
	private volatile int explicitExtensions;

	private volatile @Nullable ReleaseOutcome releaseOutcome;

	/** Renews or watches the lease on the shared scheduler; guarded by the state lock. */
	private volatile @Nullable LeaseWatch watch;

	/**
	 * A lock rather than the monitor: it is held across a network round, and a virtual
	 * thread waiting on a monitor would pin its carrier thread (JDK 21 to 23).
	 */
	private final ReentrantLock stateLock = new ReentrantLock();

	private final LossState loss;

	public LeaseState(LeaseSupport support, String name, String resource, HeldValue held, Duration ttl,
			LongSupplier ticker, long acquiredAtNanos, long validUntilNanos) {
		this.support = support;
		this.name = name;
		this.resource = resource;
		this.held = held;
		this.ttl = ttl;
		this.ticker = ticker;
		this.acquiredAtNanos = acquiredAtNanos;
		this.longestTtlNanos = ttl.toNanos();
		this.currentTtlNanos = ttl.toNanos();
		this.validatedAtNanos = acquiredAtNanos;
		this.validUntilNanos = validUntilNanos;
		this.loss = new LossState(name);
	}

	@Override
	public String name() {
		return this.name;
	}

	@Override
	public String resource() {
		return this.resource;
	}

	public RawArgument key() {
		return this.held.key();
	}

	public Duration ttl() {
		return this.ttl;
	}

	/** How long automatic renewal keeps the lease by default. */
	public Duration maxHold() {
		return this.support.settings().maxHold();
	}

	@Override
	public Duration heldFor() {
		return Duration.ofNanos(this.ticker.getAsLong() - this.acquiredAtNanos);
	}

	public Duration remainingValidity() {
		if (isReleased() || this.loss.isLost()) {
			return Duration.ZERO;
		}
		long left = this.validUntilNanos - this.ticker.getAsLong();
		return (left > 0) ? Duration.ofNanos(left) : Duration.ZERO;
	}

	public boolean isReleased() {
		return this.releaseOutcome != null;
	}

	public int extensionAttempts() {
		return this.extensionAttempts;
	}

	/** Extends by a call of {@code Lease.extend}; tells the listeners, signals a loss. */
	public boolean extend(Duration ttl) {
		ExtendOutcome outcome = extendHeld(ttl, false);
		this.support.extended(this.name, this.resource, outcome);
		if (outcome != ExtendOutcome.EXTENDED) {
			markLost((outcome == ExtendOutcome.EXPIRED) ? LossReason.VALIDITY_RAN_OUT : LossReason.EXTENSION_FAILED,
					null);
		}
		return outcome == ExtendOutcome.EXTENDED;
	}

	/**
	 * Extends under the state lock; the caller tells the listeners and signals a loss
	 * after leaving it.
	 * @param renewal whether automatic renewal asks (bounded by its {@code maxHold}),
	 * rather than {@code Lease.extend} (bounded by
	 * {@link RedlockSettings#maxExtensions()})
	 */
	private ExtendOutcome extendHeld(Duration ttl, boolean renewal) {
		this.stateLock.lock();
		try {
			ExtensionRequest request = beginExtension(ttl, renewal);
			return (request != null) ? finishExtension(request, this.support.extend(request)) : ExtendOutcome.EXPIRED;
		}
		finally {
			this.stateLock.unlock();
		}
	}

	/**
	 * Starts an extension, under the state lock.
	 * @return what to ask of the nodes, or {@code null} when the validity already ran out
	 */
	private @Nullable ExtensionRequest beginExtension(Duration ttl, boolean renewal) {
		if (this.releaseOutcome != null) {
			throw new IllegalStateException("Lease on '" + this.resource + "' was already released");
		}
		int max = this.support.settings().maxExtensions();
		if (!renewal && this.explicitExtensions >= max) {
			throw new IllegalStateException("Lease on '" + this.resource + "' was already extended " + max
					+ " times, the most allowed (maxExtensions); acquire the lock again instead");
		}
		Duration lockTtl = this.support.usableTtl(ttl);
		long start = this.ticker.getAsLong();
		long current = this.validUntilNanos;
		if (current - start <= 0 || this.loss.isLost()) {
			return null;
		}
		this.extensionAttempts++;
		this.longestTtlNanos = Math.max(this.longestTtlNanos, lockTtl.toNanos());
		if (!renewal) {
			this.explicitExtensions++;
		}
		return new ExtensionRequest(this.held, lockTtl, start, current);
	}

	/** Takes in what the nodes said of an extension, under the state lock. */
	private ExtendOutcome finishExtension(ExtensionRequest request, ScriptRounds.Extension extension) {
		if (extension.counted()) {
			this.validUntilNanos = extension.validUntil();
			this.validatedAtNanos = request.start();
			this.currentTtlNanos = request.ttl().toNanos();
			return ExtendOutcome.EXTENDED;
		}
		if (extension.validUntil() - request.currentValidUntil() < 0) {
			this.validUntilNanos = extension.validUntil();
		}
		return ExtendOutcome.FAILED;
	}

	/** Starts automatic renewal until {@code maxHold} after the acquisition. */
	public void autoRenew(Duration maxHold) {
		if (maxHold == null || maxHold.isNegative() || maxHold.isZero()) {
			throw new IllegalArgumentException("maxHold must be positive, was " + maxHold);
		}
		long maxHoldNanos = LockArguments.toNanos(maxHold, "maxHold");
		if (this.support.isClosed()) {
			throw new IllegalStateException(
					"Lease on '" + this.resource + "' cannot be renewed: its Redlock is closed");
		}
		if (isLost()) {
			return;
		}
		this.stateLock.lock();
		try {
			if (this.releaseOutcome != null) {
				throw new IllegalStateException("Lease on '" + this.resource + "' was already released");
			}
			long renewUntil = this.acquiredAtNanos + maxHoldNanos;
			LeaseWatch current = this.watch;
			if (current != null && current.renewsUntil(renewUntil)) {
				return;
			}
			if (current != null) {
				current.cancel();
			}
			LeaseWatch renewal = LeaseWatch.renewing(this, this.support.renewalBatches(), renewUntil);
			// started first: on a closed Redlock start() throws and the lease must not
			// look renewed
			renewal.start();
			this.watch = renewal;
		}
		finally {
			this.stateLock.unlock();
		}
	}

	/**
	 * Stops automatic renewal; a lease with loss callbacks is still watched for the end
	 * of its validity.
	 */
	public void stopAutoRenew() {
		this.stateLock.lock();
		try {
			LeaseWatch current = this.watch;
			if (current == null || !current.isRenewing()) {
				return;
			}
			current.cancel();
			this.watch = null;
		}
		finally {
			this.stateLock.unlock();
		}
		if (this.loss.hasCallbacks()) {
			watchExpiry();
		}
	}

	public boolean isAutoRenewing() {
		LeaseWatch current = this.watch;
		return current != null && current.isRenewing();
	}

	/** Whether the lease is lost; finds a validity that ran out before release. */
	public boolean isLost() {
		if (!this.loss.isLost() && this.releaseOutcome == null && this.validUntilNanos - this.ticker.getAsLong() <= 0) {
			markLost(LossReason.VALIDITY_RAN_OUT, null);
		}
		return this.loss.isLost();
	}

	public @Nullable LossReason lossReason() {
		return this.loss.reason();
	}

	/**
	 * Registers a loss callback; an unreleased lease without a watch gets one that
	 * signals the end of its validity.
	 */
	public void onLost(Runnable callback) {
		if (isLost() || !this.loss.register(callback)) {
			this.loss.run(callback);
			return;
		}
		watchExpiry();
	}

	/**
	 * Has an unreleased lease without a watch watched for the end of its validity, to
	 * signal its loss if it is not released by then.
	 */
	private void watchExpiry() {
		boolean redlockClosed = false;
		this.stateLock.lock();
		try {
			if (this.releaseOutcome == null && this.watch == null) {
				LeaseWatch expiry = LeaseWatch.watching(this, this.support.renewals());
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
			markLost(LossReason.REDLOCK_CLOSED, null);
		}
	}

	/**
	 * Marks the lease lost, once: tells the listeners, then runs the callbacks. Never
	 * call it while holding the state lock.
	 * @param callbackThread where the callbacks run; {@code null} for the calling thread
	 */
	public void markLost(LossReason reason, @Nullable OnDemandThread callbackThread) {
		List<Runnable> callbacks = this.loss.set(reason);
		if (callbacks == null) {
			return;
		}
		LeaseWatch current = this.watch;
		if (current != null) {
			current.cancel();
		}
		this.support.lost(this.name, this.resource, reason, heldFor());
		this.loss.run(callbacks, callbackThread);
	}

	/**
	 * Releases once, keeping the lock taken until {@code minHold} after the acquisition;
	 * later calls return the first outcome.
	 * @param lease the public lease, forgotten by the held set
	 */
	public ReleaseOutcome release(Object lease, Duration minHold) {
		if (minHold == null || minHold.isNegative()) {
			throw new IllegalArgumentException("minHold must be zero or positive, was " + minHold);
		}
		long minHoldNanos = LockArguments.toNanos(minHold, "minHold");
		cancelWatch();
		boolean ranOut = false;
		ReleaseOutcome outcome = null;
		this.stateLock.lock();
		try {
			if (this.releaseOutcome != null) {
				return this.releaseOutcome;
			}
			cancelWatch();
			ranOut = this.validUntilNanos - this.ticker.getAsLong() <= 0;
			outcome = ReleaseOutcome.UNKNOWN;
			try {
				// never kept beyond the TTL the nodes were last given
				long now = this.ticker.getAsLong();
				long keepNanos = Math.min(this.validatedAtNanos + this.currentTtlNanos - now,
						minHoldNanos - (now - this.acquiredAtNanos));
				outcome = this.support.release(lease, this.held, this.longestTtlNanos, keepNanos);
			}
			finally {
				// even if releasing failed unexpectedly, this lease is done: its keys
				// expire with their TTL
				this.releaseOutcome = outcome;
			}
		}
		finally {
			this.stateLock.unlock();
			if (outcome != null && this.support.hasListeners()) {
				// outside the lock: a listener may touch this lease
				this.support.released(this.name, this.resource, outcome, heldFor());
			}
		}
		if (ranOut) {
			markLost(LossReason.VALIDITY_RAN_OUT, null);
		}
		else if (outcome == ReleaseOutcome.EXPIRED) {
			markLost(LossReason.FOUND_EXPIRED, null);
		}
		return outcome;
	}

	private void cancelWatch() {
		LeaseWatch current = this.watch;
		if (current != null) {
			current.cancel();
		}
	}

	// LeaseWatch.Target: what the renewal thread reads and does

	@Override
	public ReentrantLock stateLock() {
		return this.stateLock;
	}

	@Override
	public boolean isOver() {
		return isReleased() || this.loss.isLost();
	}

	@Override
	public long now() {
		return this.ticker.getAsLong();
	}

	@Override
	public long validUntilNanos() {
		return this.validUntilNanos;
	}

	@Override
	public long renewalDueNanos() {
		return this.validatedAtNanos + this.currentTtlNanos / 3;
	}

	@Override
	public long ttlNanos() {
		return this.currentTtlNanos;
	}

	@Override
	public @Nullable ExtensionRequest beginRenewal() {
		// by the TTL the nodes were last given: the acquisition's, or a later extension's
		return beginExtension(Duration.ofNanos(this.currentTtlNanos), true);
	}

	@Override
	public ExtendOutcome finishRenewal(ExtensionRequest request, ScriptRounds.@Nullable Extension extension) {
		return (extension != null) ? finishExtension(request, extension) : ExtendOutcome.FAILED;
	}

	@Override
	public void renewed(ExtendOutcome outcome) {
		this.support.extended(this.name, this.resource, outcome);
	}

	@Override
	public void lost(LossReason reason) {
		// on their own thread: a slow callback must not delay the renewal of other leases
		markLost(reason, this.support.lossCallbacks());
	}

}
