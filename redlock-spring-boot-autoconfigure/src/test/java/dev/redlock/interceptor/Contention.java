package dev.redlock.interceptor;

import java.util.concurrent.atomic.AtomicBoolean;

import dev.redlock.core.LockNotAcquiredException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * A second caller that keeps trying for the lock a running job holds.
 */
final class Contention {

	private Contention() {
	}

	/**
	 * Calls the contender until the job has stopped running, pausing between tries, and
	 * asserts that every call made while the job ran was refused as contended.
	 * @return how many calls were refused
	 */
	static int refusalsWhile(AtomicBoolean running, Runnable contender, Pause pause) throws InterruptedException {
		int refused = 0;
		while (running.get()) {
			try {
				contender.run();
				if (running.get()) {
					fail("a second caller got the lock while the renewed job ran");
				}
			}
			catch (LockNotAcquiredException ex) {
				assertThat(ex.reason()).isEqualTo(LockNotAcquiredException.Reason.CONTENDED);
				refused++;
			}
			pause.await();
		}
		return refused;
	}

	/** The wait between two tries. */
	@FunctionalInterface
	interface Pause {

		void await() throws InterruptedException;

	}

}
