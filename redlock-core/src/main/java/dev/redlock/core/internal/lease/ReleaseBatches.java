package dev.redlock.core.internal.lease;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.HeldValue;
import dev.redlock.core.internal.ScriptRounds;
import dev.redlock.core.internal.ScriptRounds.Released;

/**
 * Sends the releases that callers ask for while the nodes are busy with others together:
 * while fewer than {@value #ROUNDS_OUT} release rounds are out, a release runs at once in
 * a round of its own (a lone caller never waits for another, nor does a thread already
 * running a round: a listener it calls may release another lease); a release asked for
 * while that many are out waits, and when a round ends, the first caller waiting releases
 * every waiting lease (up to {@value #MAX_BATCH}) in one round
 * ({@link ScriptRounds#release(List, long[])}) and hands each caller its own result.
 * Under many threads a round then costs each node one write and one read for many
 * releases instead of one each. With the pipelined transport every release runs at once
 * in its own round: the shared connections send concurrent rounds together already.
 *
 * <p>
 * Unless more than {@value #MAX_BATCH} wait, a release waits for at most one round before
 * its own starts: a round ends once a quorum answered, within the node timeout. Waiting
 * does not give up on an interrupt (the lease must be released); the caller's flag is set
 * again once its release is done.
 */
public final class ReleaseBatches {

	/** How many release rounds may be out before releases wait to go together. */
	public static final int ROUNDS_OUT = 2;

	/** The most releases sent in one round. */
	static final int MAX_BATCH = 64;

	private final ScriptRounds release;

	private final ReentrantLock lock = new ReentrantLock();

	/** The releases waiting for a round to end; guarded by the lock. */
	private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();

	/** The release rounds out; guarded by the lock. */
	private int roundsOut;

	/**
	 * The threads running the rounds out, once per round; guarded by the lock. One of
	 * them asking for another release (a listener called from its round does) would wait
	 * for its own round to end: it runs that release at once instead.
	 */
	private final List<Thread> runningRounds = new ArrayList<>(ROUNDS_OUT + 1);

	/**
	 * Whether every release runs in a round of its own at once: with the pipelined
	 * transport, whose shared connections send concurrent rounds together already.
	 */
	private final boolean unbatched;

	ReleaseBatches(ScriptRounds release, boolean unbatched) {
		this.release = release;
		this.unbatched = unbatched;
	}

	/**
	 * Releases a lease's value on the nodes now, alone or with others.
	 * @param held the value
	 * @param longestTtlNanos the longest TTL the lease was given
	 * @return the release's result
	 */
	Released release(HeldValue held, long longestTtlNanos) {
		if (this.unbatched) {
			return this.release.release(held, longestTtlNanos, 0);
		}
		Waiting queued = null;
		Thread caller = Thread.currentThread();
		this.lock.lock();
		try {
			if (this.roundsOut < ROUNDS_OUT || this.runningRounds.contains(caller)) {
				this.roundsOut++;
				this.runningRounds.add(caller);
			}
			else {
				queued = new Waiting(held, longestTtlNanos, caller);
				this.waiting.add(queued);
			}
		}
		finally {
			this.lock.unlock();
		}
		if (queued == null) {
			try {
				return this.release.release(held, longestTtlNanos, 0);
			}
			finally {
				roundEnded();
			}
		}
		List<Waiting> batch = queued.awaitTurn();
		if (batch != null) {
			try {
				releaseAll(batch);
			}
			finally {
				roundEnded();
			}
		}
		return queued.result();
	}

	/** How many release rounds are out now. */
	public int roundsOut() {
		this.lock.lock();
		try {
			return this.roundsOut;
		}
		finally {
			this.lock.unlock();
		}
	}

	/** How many releases wait for a round to end. */
	public int waiting() {
		this.lock.lock();
		try {
			return this.waiting.size();
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Runs a batch's round and hands each waiting caller its result, or the failure.
	 */
	private void releaseAll(List<Waiting> batch) {
		int parts = batch.size();
		List<HeldValue> held = new ArrayList<>(parts);
		long[] longestTtlNanos = new long[parts];
		for (int part = 0; part < parts; part++) {
			held.add(batch.get(part).held);
			longestTtlNanos[part] = batch.get(part).longestTtlNanos;
		}
		Released[] released = null;
		Throwable failure = null;
		try {
			released = (parts == 1) ? new Released[] { this.release.release(held.get(0), longestTtlNanos[0], 0) }
					: this.release.release(held, longestTtlNanos);
		}
		catch (Throwable ex) {
			failure = ex;
		}
		for (int part = 0; part < parts; part++) {
			batch.get(part).finish((released != null) ? released[part] : null, failure);
		}
	}

	/**
	 * Ends the caller's round: the first caller waiting, if any, sends the next batch,
	 * else one round fewer is out.
	 */
	private void roundEnded() {
		Waiting next = null;
		this.lock.lock();
		try {
			this.runningRounds.remove(Thread.currentThread());
			if (this.waiting.isEmpty()) {
				this.roundsOut--;
			}
			else {
				List<Waiting> batch = new ArrayList<>(Math.min(this.waiting.size(), MAX_BATCH));
				while (!this.waiting.isEmpty() && batch.size() < MAX_BATCH) {
					batch.add(this.waiting.poll());
				}
				next = batch.get(0);
				next.batch = batch;
				this.runningRounds.add(next.caller);
			}
		}
		finally {
			this.lock.unlock();
		}
		if (next != null) {
			next.lead();
		}
	}

	/** A release waiting for a round to end. */
	private static final class Waiting {

		private static final int WAITING = 0;

		private static final int LEADING = 1;

		private static final int DONE = 2;

		final HeldValue held;

		final long longestTtlNanos;

		private final Thread caller;

		/** The batch this caller sends, when it leads one; set before it is told. */
		@Nullable List<Waiting> batch;

		private @Nullable Released released;

		private @Nullable Throwable failure;

		private volatile int state = WAITING;

		Waiting(HeldValue held, long longestTtlNanos, Thread caller) {
			this.held = held;
			this.longestTtlNanos = longestTtlNanos;
			this.caller = caller;
		}

		/**
		 * Waits until another caller released this one, or this one is to send a batch.
		 * @return the batch to send, or {@code null} when released
		 */
		@Nullable List<Waiting> awaitTurn() {
			boolean interrupted = false;
			while (this.state == WAITING) {
				LockSupport.park(this);
				interrupted |= Thread.interrupted();
			}
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
			return (this.state == LEADING) ? this.batch : null;
		}

		void lead() {
			this.state = LEADING;
			LockSupport.unpark(this.caller);
		}

		void finish(@Nullable Released released, @Nullable Throwable failure) {
			this.released = released;
			this.failure = failure;
			if (this.state == WAITING) {
				this.state = DONE;
				LockSupport.unpark(this.caller);
			}
		}

		Released result() {
			if (this.failure instanceof RuntimeException ex) {
				throw ex;
			}
			if (this.failure instanceof Error error) {
				throw error;
			}
			if (this.failure != null) {
				throw new IllegalStateException("Releasing failed", this.failure);
			}
			return this.released;
		}

	}

}
