package dev.redlock.interceptor;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.Lease;
import dev.redlock.core.ReleaseOutcome;

/**
 * Passes every callback on to an observation, logging and swallowing what it throws, so
 * that an observer can never stop a method from running under its lock nor a lease from
 * being released.
 */
final class GuardedLockObservation implements LockObservation {

	private static final Logger logger = LoggerFactory.getLogger(GuardedLockObservation.class);

	private final LockObservation delegate;

	GuardedLockObservation(LockObservation delegate) {
		this.delegate = delegate;
	}

	@Override
	public void acquired(Lease lease) {
		guard("acquired", () -> this.delegate.acquired(lease));
	}

	@Override
	public void notAcquired(Throwable failure) {
		guard("notAcquired", () -> this.delegate.notAcquired(failure));
	}

	@Override
	public void leaveScope() {
		guard("leaveScope", this.delegate::leaveScope);
	}

	@Override
	public void skipped() {
		guard("skipped", this.delegate::skipped);
	}

	@Override
	public void fellBack() {
		guard("fellBack", this.delegate::fellBack);
	}

	@Override
	public void releasing() {
		guard("releasing", this.delegate::releasing);
	}

	@Override
	public void released(ReleaseOutcome outcome) {
		guard("released", () -> this.delegate.released(outcome));
	}

	@Override
	public void releaseFailed(RuntimeException failure) {
		guard("releaseFailed", () -> this.delegate.releaseFailed(failure));
	}

	@Override
	public void finished(@Nullable Throwable failure) {
		guard("finished", () -> this.delegate.finished(failure));
	}

	private void guard(String callback, Runnable call) {
		try {
			call.run();
		}
		catch (RuntimeException ex) {
			logger.warn("Lock observation {} failed in {}; the lock's work goes on", this.delegate, callback, ex);
		}
	}

}
