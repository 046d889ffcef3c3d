package dev.redlock.core.internal.transport;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The first connections of a new {@code Redlock}, opened in the background as soon as it
 * is built: calls made before they are open wait for them, so that a service's first
 * calls after a deploy are not spent connecting (and loading the client's classes) within
 * the node timeout. It is over once a quorum of nodes has every connection it keeps warm
 * open, or every node's warm-up has ended (opened, or an attempt failed), or
 * {@link #CONNECT_TIMEOUT_MILLIS} after the start, whichever comes first; after that it
 * costs nothing.
 */
public final class WarmUp {

	/**
	 * Bound on opening a connection in the background, greeting included, and on how long
	 * calls wait for the warm-up: a first connection in a JVM that is still loading
	 * classes takes far longer than a round trip.
	 */
	public static final int CONNECT_TIMEOUT_MILLIS = 2_000;

	private final int nodes;

	private final int needed;

	private final long deadline;

	private final CountDownLatch over = new CountDownLatch(1);

	private int opened;

	private int ended;

	private volatile boolean done;

	/**
	 * Starts a warm-up.
	 * @param nodes how many nodes open connections, none for no warm-up at all
	 * @param needed how many must have one for calls to go ahead: a quorum
	 */
	public WarmUp(int nodes, int needed) {
		this.nodes = nodes;
		this.needed = needed;
		this.deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CONNECT_TIMEOUT_MILLIS);
		if (nodes == 0) {
			end();
		}
	}

	/** A warm-up that is over before it starts: no connection is opened in advance. */
	public static WarmUp none() {
		return new WarmUp(0, 0);
	}

	/**
	 * A node's warm-up has ended.
	 * @param connected whether it opened every connection it keeps warm
	 */
	synchronized void nodeDone(boolean connected) {
		this.ended++;
		if (connected) {
			this.opened++;
		}
		if (this.opened >= this.needed || this.ended >= this.nodes) {
			end();
		}
	}

	private void end() {
		this.done = true;
		this.over.countDown();
	}

	/**
	 * Waits until the warm-up is over; returns at once when it is. An interrupt ends the
	 * wait and stays set, for the call to see.
	 */
	public void await() {
		if (this.done) {
			return;
		}
		long left = this.deadline - System.nanoTime();
		if (left <= 0) {
			this.done = true;
			return;
		}
		try {
			if (!this.over.await(left, TimeUnit.NANOSECONDS)) {
				this.done = true;
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Whether the warm-up is over.
	 * @return {@code true} once calls no longer wait for it
	 */
	boolean isOver() {
		return this.done || System.nanoTime() - this.deadline >= 0;
	}

}
