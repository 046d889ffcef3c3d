package dev.redlock.benchmarks;

import java.util.concurrent.atomic.AtomicInteger;

import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * Fresh keys for one benchmark thread: a per-thread prefix and a counter, so no two
 * invocations share a key.
 */
@State(Scope.Thread)
public class Keys {

	private static final AtomicInteger THREADS = new AtomicInteger();

	private final String prefix = "bench:t" + THREADS.incrementAndGet() + ":";

	private long next;

	/**
	 * A key no invocation has used before.
	 * @return the key
	 */
	public String next() {
		return this.prefix + (this.next++);
	}

}
