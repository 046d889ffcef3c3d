package dev.redlock.core.internal.lease;

import java.time.Duration;

import dev.redlock.core.LossReason;
import dev.redlock.core.RedlockListener.ExtendEvent;
import dev.redlock.core.RedlockListener.ExtendOutcome;
import dev.redlock.core.RedlockListener.LeaseLostEvent;
import dev.redlock.core.RedlockListener.ReleaseEvent;
import dev.redlock.core.RedlockSettings;
import dev.redlock.core.ReleaseOutcome;
import dev.redlock.core.internal.ExtensionRequest;
import dev.redlock.core.internal.HeldValue;
import dev.redlock.core.internal.LockArguments;
import dev.redlock.core.internal.LockEvents;
import dev.redlock.core.internal.NodeGroup;
import dev.redlock.core.internal.ScriptRounds;
import dev.redlock.core.internal.thread.OnDemandThread;
import dev.redlock.core.internal.thread.RenewalScheduler;
import dev.redlock.core.internal.waiting.LockWaiters;

/**
 * What the leases of one {@code Redlock} share: the nodes that extend and release them,
 * the settings, the renewal thread, the thread for loss callbacks, the listeners, the
 * held set and the queues of threads waiting for their keys. It knows nothing of the
 * {@code Redlock} itself, so a lease never calls back into it.
 */
public final class LeaseSupport {

	private final NodeGroup group;

	private final ScriptRounds rounds;

	private final RedlockSettings settings;

	private final LockArguments arguments;

	private final LockWaiters waiters;

	private final HeldLeases<?> held;

	private final RenewalScheduler renewals;

	private final RenewalBatches renewalBatches;

	private final ReleaseBatches releases;

	/**
	 * Runs the loss callbacks of leases whose loss the renewal thread found, so they
	 * never delay a renewal.
	 */
	private final OnDemandThread lossCallbacks = new OnDemandThread(
			OnDemandThread.numbered(OnDemandThread.LOSS_CALLBACKS));

	private volatile boolean closed;

	public LeaseSupport(NodeGroup group, ScriptRounds rounds, RedlockSettings settings, LockArguments arguments,
			LockWaiters waiters, HeldLeases<?> held, RenewalScheduler renewals) {
		this.group = group;
		this.rounds = rounds;
		this.settings = settings;
		this.arguments = arguments;
		this.waiters = waiters;
		this.held = held;
		this.renewals = renewals;
		this.renewalBatches = new RenewalBatches(renewals, rounds);
		this.releases = new ReleaseBatches(rounds, settings.transport() != RedlockSettings.Transport.POOLED);
	}

	RedlockSettings settings() {
		return this.settings;
	}

	/** Checks a TTL for an extension; see {@link LockArguments#usableTtl}. */
	Duration usableTtl(Duration ttl) {
		return this.arguments.usableTtl(ttl);
	}

	RenewalScheduler renewals() {
		return this.renewals;
	}

	/** Renews the leases due together in one round. */
	RenewalBatches renewalBatches() {
		return this.renewalBatches;
	}

	/** Sends the releases asked for together while the nodes are busy. */
	public ReleaseBatches releaseBatches() {
		return this.releases;
	}

	public OnDemandThread lossCallbacks() {
		return this.lossCallbacks;
	}

	public boolean isClosed() {
		return this.closed;
	}

	/**
	 * Refuses new work from now on; the owner closes the threads and connections.
	 */
	public void markClosed() {
		this.closed = true;
	}

	/** Extends a lease's value on the nodes; see {@link ScriptRounds#extend}. */
	ScriptRounds.Extension extend(ExtensionRequest request) {
		return this.rounds.extend(request);
	}

	/**
	 * Releases a lease's value on the nodes, and wakes the threads waiting for its key
	 * once a quorum deleted it.
	 * @param lease the lease, forgotten by the held set
	 * @param keepNanos how much longer the lock must stay taken; zero or less to delete
	 * it now
	 */
	ReleaseOutcome release(Object lease, HeldValue held, long longestTtlNanos, long keepNanos) {
		this.held.remove(lease);
		this.waiters.releasing(held.key(), held.value().getRaw());
		// only releases that delete at once go together: one kept for a minimum hold
		// sets a TTL of its own
		ScriptRounds.Released released = (keepNanos > 0) ? this.rounds.release(held, longestTtlNanos, keepNanos)
				: this.releases.release(held, longestTtlNanos);
		if (released.deleted()) {
			this.waiters.released(held.key(), held.value().getRaw(), released.replies());
		}
		return released.outcome();
	}

	/** Tells the listeners of an extension; never called under a lease's state lock. */
	void extended(String name, String resource, ExtendOutcome outcome) {
		LockEvents events = this.group.events();
		if (events.hasListeners()) {
			events.leaseExtended(new ExtendEvent(name, resource, outcome));
		}
	}

	/** Tells the listeners of a release; never called under a lease's state lock. */
	void released(String name, String resource, ReleaseOutcome outcome, Duration heldFor) {
		this.group.events().leaseReleased(new ReleaseEvent(name, resource, outcome, heldFor));
	}

	/**
	 * Whether any listener is told of releases: when none is, nothing is measured for
	 * them (a test's scripted clock sees only the algorithm's reads).
	 */
	boolean hasListeners() {
		return this.group.events().hasListeners();
	}

	/** Tells the listeners of a loss. */
	void lost(String name, String resource, LossReason reason, Duration heldFor) {
		this.group.events().leaseLost(new LeaseLostEvent(name, resource, reason, heldFor));
	}

}
