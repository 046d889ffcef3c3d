package dev.redlock.interceptor;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

import dev.redlock.core.Lease;

/**
 * What a locked method under test does with its lease: holds it for a while, failing if
 * it stops being valid meanwhile (a renewal that did not come in time).
 */
final class ValidLease {

	private ValidLease() {
	}

	/**
	 * Holds the calling method's lease for the given time, checking every 10 ms that it
	 * is still valid.
	 * @param running set while the lease is held
	 * @return the lease
	 * @throws IllegalStateException if the lease stopped being valid
	 */
	static Lease heldFor(Duration duration, AtomicBoolean running) {
		Lease lease = LockContext.currentLease().orElseThrow();
		running.set(true);
		try {
			long end = System.nanoTime() + duration.toNanos();
			while (System.nanoTime() - end < 0) {
				if (!lease.isValid()) {
					throw new IllegalStateException("lease not valid while renewed: " + lease);
				}
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
			}
			return lease;
		}
		finally {
			running.set(false);
		}
	}

}
