package dev.redlock.interceptor;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A critical section that loses updates unless callers exclude each other: it reads a
 * counter, yields the thread (a virtual thread gives up its carrier, so another can run
 * in between), then writes it back; it also counts how many callers were inside at once.
 * Shared by the tests that lock from virtual threads.
 */
public final class CriticalSection {

	private volatile int count;

	private final AtomicInteger inside = new AtomicInteger();

	private final AtomicInteger maxInside = new AtomicInteger();

	/** Runs the section once. */
	public void enter() {
		this.maxInside.accumulateAndGet(this.inside.incrementAndGet(), Math::max);
		try {
			int read = this.count;
			Thread.yield();
			this.count = read + 1;
		}
		finally {
			this.inside.decrementAndGet();
		}
	}

	/**
	 * How many times the section ran, as its own counter says: lower than the calls if
	 * updates were lost.
	 */
	public int count() {
		return this.count;
	}

	/** The most callers that were inside at once. */
	public int maxInside() {
		return this.maxInside.get();
	}

	/** Starts counting afresh. */
	public void reset() {
		this.count = 0;
		this.inside.set(0);
		this.maxInside.set(0);
	}

}
