package dev.redlock.test;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Waits for what servers do in their own time (a replica in sync, a failover agreed on),
 * looking again every 25 ms until a deadline. A condition that throws is not met yet: a
 * node that does not answer, or a view that has not settled.
 */
final class Await {

	private static final Duration POLL = Duration.ofMillis(25);

	private Await() {
	}

	/**
	 * @param what what is awaited, for the failure's message
	 * @param timeout how long to wait at most
	 * @param condition the condition
	 * @throws IllegalStateException when the deadline passes first
	 */
	static void until(String what, Duration timeout, BooleanSupplier condition) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (true) {
			try {
				if (condition.getAsBoolean()) {
					return;
				}
			}
			catch (RuntimeException notYet) {
				// looked at again after the poll
			}
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException("not reached within " + timeout.toSeconds() + " s: " + what);
			}
			ChildProcesses.sleep(POLL);
		}
	}

}
