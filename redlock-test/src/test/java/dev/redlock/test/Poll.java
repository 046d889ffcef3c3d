package dev.redlock.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Polls a condition on a node until it holds, parked between looks, failing after a
 * deadline: for what a server does in its own time (an expiry, a replica's sync).
 */
final class Poll {

	private Poll() {
	}

	/**
	 * @param what what is awaited, for the failure
	 * @param timeout how long to wait at most
	 * @param condition the condition
	 */
	static void until(String what, Duration timeout, BooleanSupplier condition) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime() - deadline).as("%s within %s", what, timeout).isNegative();
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
		}
	}

}
