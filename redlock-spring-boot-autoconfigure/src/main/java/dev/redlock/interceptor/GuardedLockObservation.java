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
		try {
			this.delegate.acquired(lease);
		}
		catch (RuntimeException ex) {
			failed("acquired", ex);
		}
	}

	@Override
	public void notAcquired(Throwable failure) {
		try {
			this.delegate.notAcquired(failure);
		}
		catch (RuntimeException ex) {
			failed("notAcquired", ex);
		}
	}

	@Override
	public void leaveScope() {
		try {
			this.delegate.leaveScope();
		}
		catch (RuntimeException ex) {
			failed("leaveScope", ex);
		}
	}

	@Override
	public void skipped() {
		try {
			this.delegate.skipped();
		}
		catch (RuntimeException ex) {
			failed("skipped", ex);
		}
	}

	@Override
	public void fellBack() {
		try {
			this.delegate.fellBack();
		}
		catch (RuntimeException ex) {
			failed("fellBack", ex);
		}
	}

	@Override
	public void releasing() {
		try {
			this.delegate.releasing();
		}
		catch (RuntimeException ex) {
			failed("releasing", ex);
		}
	}

	@Override
	public void released(ReleaseOutcome outcome) {
		try {
			this.delegate.released(outcome);
		}
		catch (RuntimeException ex) {
			failed("released", ex);
		}
	}

	@Override
	public void releaseFailed(RuntimeException failure) {
		try {
			this.delegate.releaseFailed(failure);
		}
		catch (RuntimeException ex) {
			failed("releaseFailed", ex);
		}
	}

	@Override
	public void finished(@Nullable Throwable failure) {
		try {
			this.delegate.finished(failure);
		}
		catch (RuntimeException ex) {
			failed("finished", ex);
		}
	}

	private void failed(String callback, RuntimeException ex) {
		logger.warn("Lock observation {} failed in {}; the lock's work goes on", this.delegate, callback, ex);
	}

}
