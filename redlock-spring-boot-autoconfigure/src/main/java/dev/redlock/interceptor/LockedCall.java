package dev.redlock.interceptor;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.CoroutinesUtils;
import org.springframework.core.KotlinDetector;

import dev.redlock.annotation.OnLeaseLost;
import dev.redlock.annotation.OnLocked;
import dev.redlock.core.Lease;
import dev.redlock.core.LeaseLostException;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.LockRequest;
import dev.redlock.core.LockNotAcquiredException.Reason;
import dev.redlock.core.Redlock;
import dev.redlock.core.LossReason;
import dev.redlock.core.RedlockSettings;
import dev.redlock.core.ReleaseOutcome;

/**
 * One call that acquires locks: acquisition in canonical order within one wait time, the
 * method, and the release, at once or when the returned {@code CompletionStage}
 * completes.
 */
final class LockedCall {

	private static final Logger logger = LoggerFactory.getLogger(DistributedLockInterceptor.class);

	private final LockAttributes attributes;

	private final Redlock redlock;

	private final LockObservation observation;

	private final List<Lease> acquired = new ArrayList<>(1);

	LockedCall(LockAttributes attributes, Redlock redlock, LockObservation observation) {
		this.attributes = attributes;
		this.redlock = redlock;
		this.observation = observation;
	}

	@Nullable Object run(MethodInvocation invocation, Object target, Object[] args, List<String> resources, List<Lease> joined)
			throws Throwable {
		try {
			acquireAll(resources);
		}
		catch (LockNotAcquiredException ex) {
			return whenLocked(ex, target, args);
		}
		catch (Throwable ex) {
			this.observation.notAcquired(ex);
			this.observation.finished(ex);
			throw ex;
		}
		List<Lease> held = this.acquired;
		if (!joined.isEmpty()) {
			held = new ArrayList<>(this.acquired);
			held.addAll(joined);
		}
		Object result;
		LockContext.Frame outer = LockContext.enter(this.redlock, held);
		try {
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			LockContext.exit(outer);
			finish(ex);
			throw ex;
		}
		LockContext.exit(outer);
		if (this.attributes.asynchronous() && result instanceof CompletionStage<?> stage) {
			// the lock is held until the asynchronous work is done, or its future
			// cancelled
			this.observation.leaveScope();
			stage.whenComplete((value, failure) -> finishQuietly(unwrap(failure)));
			return result;
		}
		LeaseLostException lost = finish(null);
		if (lost != null) {
			throw lost;
		}
		return result;
	}

	/** The leases this call acquired, in canonical order. */
	List<Lease> acquired() {
		return this.acquired;
	}

	/**
	 * The call goes on after the method returned on the calling thread: see
	 * {@link LockObservation#leaveScope()}.
	 */
	void leaveScope() {
		this.observation.leaveScope();
	}

	/** What the annotation says to do when the lock cannot be had. */
	OnLocked onLocked() {
		return this.attributes.onLocked();
	}

	/**
	 * Acquires every resource, in the given (canonical) order, all within the one wait
	 * time; releases those already acquired if one fails.
	 */
	void acquireAll(List<String> resources) {
		RedlockSettings settings = this.redlock.settings();
		Duration ttl = (this.attributes.ttl() != null) ? this.attributes.ttl() : settings.defaultTtl();
		Duration waitTime = (this.attributes.waitTime() != null) ? this.attributes.waitTime()
				: settings.defaultWaitTime();
		boolean renew = (this.attributes.autoRenew() != null) ? this.attributes.autoRenew() : settings.autoRenew();
		Duration maxHold = (this.attributes.maxHold() != null) ? this.attributes.maxHold() : settings.maxHold();
		Duration quarantine = settings.restartQuarantine();
		if (LockTerms.exceeds(ttl, quarantine)) {
			// the quarantine caps every TTL: take it, and renew up to the ttl asked for
			if (!renew) {
				renew = true;
				maxHold = ttl.minus(quarantine);
			}
			ttl = quarantine;
		}
		long deadline = System.nanoTime() + waitTime.toNanos();
		try {
			for (String resource : resources) {
				Duration wait = (resources.size() == 1) ? waitTime
						: Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
				// one request per call, built at once: this is every locked call's path
				LockRequest request = new LockRequest(resource, ttl, this.attributes.name(), this.attributes.fencing());
				Lease lease = this.redlock.acquire(request, wait);
				this.acquired.add(lease);
				if (renew) {
					lease.autoRenew(maxHold);
				}
			}
			if (this.acquired.size() > 1) {
				checkStillValid();
			}
		}
		catch (RuntimeException | Error ex) {
			for (int i = this.acquired.size() - 1; i >= 0; i--) {
				this.acquired.get(i).release();
			}
			this.acquired.clear();
			throw ex;
		}
		this.observation.acquired(this.acquired.get(0));
	}

	/**
	 * The first leases of several must not have run out while the later ones were
	 * acquired.
	 */
	private void checkStillValid() {
		for (Lease lease : this.acquired) {
			if (!lease.isValid()) {
				throw new LockNotAcquiredException(lease.resource(), Reason.VALIDITY_EXHAUSTED, this.acquired.size(),
						lease.heldFor(), List.of(), List.of(), null);
			}
		}
	}

	/** The lock could not be had: throw, skip or fall back, as the annotation says. */
	@Nullable Object whenLocked(LockNotAcquiredException notAcquired, Object target, Object[] args) throws Throwable {
		this.observation.notAcquired(notAcquired);
		switch (this.attributes.onLocked()) {
			case SKIP -> {
				this.observation.skipped();
				this.observation.finished(null);
				logger.debug("Skipped {}: lock '{}' not acquired ({})", this.attributes.description(),
						this.attributes.name(), notAcquired.reason());
				return EmptyValues.of(this.attributes.method().getReturnType());
			}
			case FALLBACK -> {
				this.observation.fellBack();
				Throwable failure = null;
				try {
					Method fallback = this.attributes.fallback();
					if (KotlinDetector.isSuspendingFunction(fallback)) {
						// a suspend fallback runs as a Mono too, in the caller's
						// coroutine
						return CoroutinesUtils.invokeSuspendingFunction(fallback, target, args);
					}
					return fallback.invoke(target, args);
				}
				catch (InvocationTargetException ex) {
					failure = ex.getCause();
					throw failure;
				}
				finally {
					this.observation.finished(failure);
				}
			}
			default -> {
				this.observation.finished(notAcquired);
				throw notAcquired;
			}
		}
	}

	/**
	 * Releases (after the minimum hold, if any) and reports; returns the loss to throw,
	 * if any.
	 */
	private @Nullable LeaseLostException finish(@Nullable Throwable failure) {
		LeaseLostException lost = null;
		Duration minHold = (this.attributes.minHold() != null) ? this.attributes.minHold() : Duration.ZERO;
		for (int i = this.acquired.size() - 1; i >= 0; i--) {
			Lease lease = this.acquired.get(i);
			// the time held up to the release, read only for a lease already lost (the
			// release may find it lost)
			Duration heldFor = lease.isLost() ? lease.heldFor() : null;
			release(lease, minHold, this.attributes, this.observation);
			LeaseLostException loss = lost(lease, heldFor, this.attributes, failure);
			if (lost == null) {
				lost = loss;
			}
		}
		this.observation.finished((failure != null) ? failure : lost);
		return lost;
	}

	/**
	 * The end of an asynchronous call, on whatever thread completed it: nothing may
	 * escape.
	 */
	void finishQuietly(@Nullable Throwable failure) {
		try {
			finish(failure);
		}
		catch (RuntimeException ex) {
			logger.warn("Finishing the lock of {} failed; it expires at the end of its TTL",
					this.attributes.description(), ex);
		}
	}

	private static @Nullable Throwable unwrap(@Nullable Throwable failure) {
		return (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause() : failure;
	}

	/**
	 * Logs a lease lost before the method returned, and returns the exception to throw
	 * for it: {@code null} with {@link OnLeaseLost#LOG}, or when the method threw (the
	 * loss is then added to its exception as suppressed).
	 */
	private static @Nullable LeaseLostException lost(Lease lease, @Nullable Duration heldBeforeRelease,
			LockAttributes attributes, @Nullable Throwable failure) {
		if (!lease.isLost()) {
			return null;
		}
		Duration heldFor = (heldBeforeRelease != null) ? heldBeforeRelease : lease.heldFor();
		String reason = lease.lossReason().map(LossReason::tag).orElse("lost");
		logger.warn(
				"Lock '{}' was lost before {} {} ({}; {} ms held, TTL {} ms): another caller may have run at the "
						+ "same time; raise the ttl or renew the lease",
				attributes.name(), attributes.description(), (failure != null) ? "threw" : "returned", reason,
				heldFor.toMillis(), lease.ttl().toMillis());
		if (attributes.onLeaseLost() != OnLeaseLost.THROW) {
			return null;
		}
		LeaseLostException exception = new LeaseLostException(lease, attributes.description(), heldFor);
		if (failure != null) {
			failure.addSuppressed(exception);
			return null;
		}
		return exception;
	}

	private static void release(Lease lease, Duration minHold, LockAttributes attributes, LockObservation observation) {
		observation.releasing();
		ReleaseOutcome outcome;
		try {
			outcome = lease.release(minHold);
		}
		catch (RuntimeException ex) {
			observation.releaseFailed(ex);
			logger.warn("Releasing lock '{}' after {} failed; it expires at the end of its TTL", attributes.name(),
					attributes.description(), ex);
			return;
		}
		observation.released(outcome);
		if (outcome == ReleaseOutcome.UNKNOWN) {
			logger.warn("Lock '{}' could not be confirmed released after {}: too few nodes answered; it expires at the "
					+ "end of its TTL", attributes.name(), attributes.description());
		}
	}

}
