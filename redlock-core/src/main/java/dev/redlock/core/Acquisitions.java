package dev.redlock.core;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.LockNotAcquiredException.Reason;
import dev.redlock.core.RedlockListener.AcquireEvent;
import dev.redlock.core.RedlockListener.AcquireOutcome;
import dev.redlock.core.internal.AcquireAttempt;
import dev.redlock.core.internal.AcquireRound;
import dev.redlock.core.internal.HeldValue;
import dev.redlock.core.internal.LockArguments;
import dev.redlock.core.internal.LockEvents;
import dev.redlock.core.internal.NodeGroup;
import dev.redlock.core.internal.lease.HeldLeases;
import dev.redlock.core.internal.lease.LeaseState;
import dev.redlock.core.internal.lease.LeaseSupport;
import dev.redlock.core.internal.protocol.RawArgument;
import dev.redlock.core.internal.waiting.LockWaiters;
import dev.redlock.core.internal.waiting.WaitOutcome;

/**
 * The acquisitions of a {@link Redlock}: checks the arguments, makes a single attempt or
 * waits in the key's queue, then turns the outcome into a {@link Lease} or a
 * {@link LockNotAcquiredException}, and tells the listeners.
 */
final class Acquisitions {

	private final LeaseSupport support;

	private final NodeGroup group;

	private final AcquireRound round;

	private final LockWaiters waiters;

	private final HeldLeases<Lease> held;

	private final LockArguments arguments;

	private final LongSupplier ticker;

	Acquisitions(LeaseSupport support, NodeGroup group, AcquireRound round, LockWaiters waiters, HeldLeases<Lease> held,
			LockArguments arguments, LongSupplier ticker) {
		this.support = support;
		this.group = group;
		this.round = round;
		this.waiters = waiters;
		this.held = held;
		this.arguments = arguments;
		this.ticker = ticker;
	}

	Lease acquire(LockRequest request, Duration waitTime) {
		RawArgument key = checkedKey(request);
		Duration lockTtl = checkedTtl(request);
		String name = request.name();
		String resource = request.resource();
		boolean fenced = request.isFenced();
		long waitNanos = LockArguments.waitNanos(waitTime);
		long start = this.ticker.getAsLong();
		if (Thread.currentThread().isInterrupted()) {
			throw notAcquired(name, interrupted(resource, 0, start, null));
		}
		if (waitNanos == 0) {
			AcquireAttempt only = this.round.attempt(key, lockTtl, fenced);
			if (only.won()) {
				return acquired(name, resource, key, lockTtl, only, start, 1, 0);
			}
			throw notAcquired(name, only.failure(resource, 1, elapsedSince(start)));
		}
		WaitOutcome outcome = this.waiters.acquire(key, start + waitNanos,
				() -> this.round.attempt(key, lockTtl, fenced));
		AcquireAttempt last = outcome.last();
		if (last != null && last.won()) {
			return acquired(name, resource, key, lockTtl, last, start, outcome.attempts(),
					outcome.queued() ? last.start() - start : 0);
		}
		switch (outcome.wake()) {
			case CLOSED ->
				throw new IllegalStateException("This Redlock was closed while waiting for lock '" + resource + "'");
			case INTERRUPTED -> throw notAcquired(name, interrupted(resource, outcome.attempts(), start, null));
			default -> {
				Duration waited = elapsedSince(start);
				throw notAcquired(name,
						(last != null) ? last.failure(resource, outcome.attempts(), waited)
								: new LockNotAcquiredException(resource, Reason.CONTENDED, 0, waited, List.of(),
										List.of(), null));
			}
		}
	}

	Optional<Lease> tryAcquire(LockRequest request) {
		RawArgument key = checkedKey(request);
		Duration ttl = checkedTtl(request);
		AcquireAttempt attempt = this.round.attempt(key, ttl, request.isFenced());
		String name = request.name();
		String resource = request.resource();
		if (attempt.won()) {
			return Optional.of(acquired(name, resource, key, ttl, attempt, attempt.start(), 1, 0));
		}
		notAcquired(name, attempt.failure(resource, 1, Duration.ofNanos(attempt.end() - attempt.start())));
		return Optional.empty();
	}

	/**
	 * Records an acquisition and tells the listeners; reads no clock unless listeners
	 * took the lease's whole validity, so that a test's scripted ticker sees only the
	 * algorithm's reads. Listener time counts in the validity: a lease they leave with
	 * nothing is released, and the acquisition fails with
	 * {@link Reason#VALIDITY_EXHAUSTED}. Should anything fail here, the lock is released
	 * before the failure reaches the caller, never left on the nodes until its TTL.
	 */
	private Lease acquired(String name, String resource, RawArgument key, Duration ttl, AcquireAttempt attempt,
			long start, int attempts, long waitedNanos) {
		HeldValue value = new HeldValue(key, attempt.value(), attempt.writtenTo(), attempt.answeredLate());
		Lease lease = new Lease(new LeaseState(this.support, name, resource, value, ttl, this.ticker, attempt.start(),
				attempt.validUntil()), attempt.token());
		try {
			this.held.add(lease, attempt.validUntil() - attempt.end());
			if (this.support.isClosed()) {
				// closed while this lease was being acquired: it can be neither renewed
				// nor watched
				lease.markLost(LossReason.REDLOCK_CLOSED);
			}
			LockEvents events = this.group.events();
			if (events.hasListeners()) {
				events.acquireFinished(new AcquireEvent(lease.name(), lease.resource(), AcquireOutcome.ACQUIRED,
						Duration.ofNanos(attempt.end() - start), attempts,
						Duration.ofNanos(attempt.validUntil() - attempt.end()),
						Duration.ofNanos(Math.max(0, waitedNanos))));
				if (!lease.isValid()) {
					// the listeners took the whole validity: no lease with nothing left
					lease.release();
					throw notAcquired(name,
							new LockNotAcquiredException(resource, Reason.VALIDITY_EXHAUSTED, attempts,
									Duration.ofNanos(Math.max(0, this.ticker.getAsLong() - start)), List.of(),
									List.of(), null));
				}
			}
			return lease;
		}
		catch (Throwable ex) {
			lease.release();
			throw ex;
		}
	}

	/**
	 * Checks that this instance is open and the request's resource usable, before any
	 * network call (its TTL is checked next, by {@link #checkedTtl}).
	 */
	private RawArgument checkedKey(LockRequest request) {
		if (this.support.isClosed()) {
			throw new IllegalStateException("This Redlock is closed: it acquires no more locks");
		}
		return this.arguments.keyFor(request.resource());
	}

	/**
	 * Checks the request's TTL; then, on a {@code Redlock} just built, waits for its
	 * first connections.
	 */
	private Duration checkedTtl(LockRequest request) {
		Duration ttl = this.arguments.usableTtl(request.ttl());
		this.group.awaitWarmUp();
		return ttl;
	}

	private LockNotAcquiredException notAcquired(String name, LockNotAcquiredException failure) {
		this.group.events()
			.acquireFinished(new AcquireEvent(name, failure.resource(), AcquireOutcome.of(failure.reason()),
					failure.waited(), failure.attempts(), Duration.ZERO, failure.waited()));
		return failure;
	}

	private Duration elapsedSince(long start) {
		return Duration.ofNanos(Math.max(0, this.ticker.getAsLong() - start));
	}

	private LockNotAcquiredException interrupted(String resource, int attempts, long start,
			@Nullable InterruptedException cause) {
		return new LockNotAcquiredException(resource, Reason.INTERRUPTED, attempts, elapsedSince(start), List.of(),
				List.of(), cause);
	}

}
