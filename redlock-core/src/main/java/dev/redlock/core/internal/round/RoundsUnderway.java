package dev.redlock.core.internal.round;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * How many rounds of a {@link Fanout} are underway. With the pipelined transport, a round
 * shares the nodes' connections only while many others are underway: then their commands
 * go out together, and the nodes read and answer many at once. With few, the caller reads
 * a connection of its own sooner than a reader thread could hand it the reply (on our
 * 2-core machine four threads locked a third slower over shared connections, eight alike,
 * sixteen faster; see the benchmarks page).
 */
public final class RoundsUnderway {

	/** From how many rounds underway besides its own a round shares the connections. */
	static final int SHARED_FROM = 8;

	private final AtomicInteger underway = new AtomicInteger();

	/**
	 * A round starts.
	 * @return whether enough others are underway that it shares the connections
	 */
	boolean start() {
		return this.underway.getAndIncrement() >= SHARED_FROM;
	}

	/** A round ended. */
	void end() {
		this.underway.decrementAndGet();
	}

}
