package dev.redlock.core.internal.waiting;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.RedlockSettings;
import dev.redlock.core.internal.AcquireAttempt;
import dev.redlock.core.internal.protocol.RawArgument;
import dev.redlock.core.internal.round.NodeReply;
import dev.redlock.core.internal.round.Quorum;
import dev.redlock.core.internal.waiting.WaitOutcome.Wake;

/**
 * The threads of a {@code Redlock} that wait for locks. Per key they form a queue in
 * arrival order, and only its head tries the nodes; the others wait for their turn, so no
 * thread of the instance is passed over. The head tries again when the lock is released:
 * by a thread of this instance (it is told at once), or by another instance (every node
 * announces a release on the key's channel, to which this instance subscribes while it
 * has waiters). Should no notice come (a holder that died, a lost message, a node that is
 * down), it tries again after the retry delay.
 *
 * <p>
 * Between instances, a release yields: when this instance releases a key that other
 * instances wait for (the nodes count their subscribers), its own threads hold back for a
 * short window, long enough for a waiter elsewhere to hear of the release and take the
 * lock, and try only if nobody did. So instances that wait take turns, however many
 * threads each has, and an instance that holds a key often cannot keep it from others by
 * re-acquiring at once.
 *
 * <p>
 * None of this decides who holds a lock: every attempt is a full Redlock round, and a
 * lock is held only with a quorum and validity left.
 */
public final class LockWaiters implements AutoCloseable {

	/**
	 * Split votes in a row that are retried within a couple of rounds: a real one is over
	 * by then; a previous holder's key expiring unevenly across the nodes would otherwise
	 * be hammered until its last copy expires.
	 */
	private static final int MAX_QUICK_SPLIT_VOTE_RETRIES = 2;

	private final ConcurrentHashMap<String, KeyQueue> queues = new ConcurrentHashMap<>();

	/** The keys this instance leaves to waiters elsewhere after releasing them. */
	private final ReleaseYields yields;

	private final List<NodeSubscriber> subscribers;

	private final LongSupplier ticker;

	private final long retryDelayNanos;

	private final long nodeTimeoutNanos;

	/** Notices of one release after which a quorum of nodes has deleted the key. */
	private final Quorum quorum;

	private final AtomicInteger waiting = new AtomicInteger();

	private volatile boolean closed;

	public LockWaiters(List<NodeSubscriber> subscribers, Quorum quorum, RedlockSettings settings, LongSupplier ticker) {
		this.subscribers = List.copyOf(subscribers);
		this.ticker = ticker;
		this.retryDelayNanos = settings.retryDelay().toNanos();
		this.nodeTimeoutNanos = settings.nodeTimeout().toNanos();
		this.quorum = quorum;
		this.yields = new ReleaseYields(ticker, this.nodeTimeoutNanos);
	}

	/**
	 * Returns how many threads wait for a lock right now.
	 * @return the number of threads in the queues
	 */
	public int waiting() {
		return this.waiting.get();
	}

	/**
	 * Makes attempts in the key's turn until one wins or the deadline passes: at once
	 * when no thread of this instance waits for the key (and no release yields it to
	 * others), else in the queue.
	 * @param key the lock key
	 * @param deadline the ticker reading after which no attempt starts
	 * @param attempt one round
	 * @return the last attempt made, and why the waiting ended
	 */
	public WaitOutcome acquire(RawArgument key, long deadline, Supplier<AcquireAttempt> attempt) {
		String id = key.id();
		int attempts = 0;
		@Nullable AcquireAttempt last = null;
		boolean tried = false;
		if (!this.queues.containsKey(id) && this.yields.end(id) == 0) {
			last = attempt.get();
			attempts++;
			tried = true;
			if (last.won()) {
				return new WaitOutcome(last, attempts, Wake.TRY, false);
			}
			if (deadline - this.ticker.getAsLong() <= 0) {
				return new WaitOutcome(last, attempts, Wake.DEADLINE, false);
			}
		}
		Waiter me = join(id, tried);
		boolean won = false;
		try {
			while (true) {
				Wake wake = me.queue.await(me, deadline);
				if (wake != Wake.TRY) {
					return new WaitOutcome(last, attempts, wake, true);
				}
				last = attempt.get();
				attempts++;
				if (last.won()) {
					won = true;
					return new WaitOutcome(last, attempts, Wake.TRY, true);
				}
				long now = this.ticker.getAsLong();
				me.pollAt = now + nextRetryDelayNanos();
				me.splitVotes = last.splitVote() ? me.splitVotes + 1 : 0;
				// a previous holder's key that expires unevenly across the nodes looks
				// the same as a split vote: after a couple of quick tries, the retry
				// delay
				if (last.splitVote() && me.splitVotes <= MAX_QUICK_SPLIT_VOTE_RETRIES) {
					// others took part of the nodes at the same moment, and may all have
					// lost: their clean-up announces nothing, so try again after a random
					// pause of up to two rounds, in which one of them gets through first
					// or all have cleaned up
					me.notBefore = now + ThreadLocalRandom.current().nextLong(2 * (last.end() - last.start()) + 1);
					me.pollAt = me.notBefore;
				}
			}
		}
		finally {
			me.queue.leave(me, won);
		}
	}

	/**
	 * Notes that this instance is about to release a key, so that the nodes' notices of
	 * this release are not taken for a release by another instance.
	 * @param key the lock key
	 * @param value the value being released
	 */
	public void releasing(RawArgument key, byte[] value) {
		if (this.queues.isEmpty()) {
			return;
		}
		KeyQueue queue = this.queues.get(key.id());
		if (queue != null) {
			queue.notices.releasingHere(value);
		}
	}

	/**
	 * Tells the waiters of a key that this instance released it, and makes this
	 * instance's threads yield it when the nodes say that others wait for it too.
	 * @param key the lock key
	 * @param value the value that held it
	 * @param replies each node's reply to the release script: 1 plus the subscribers it
	 * told, 0, or a failure
	 */
	public void released(RawArgument key, byte[] value, NodeReply[] replies) {
		// the key's id is a string made per call: made only when someone may be waiting
		String id = null;
		int others = 0;
		long slowest = 0;
		for (NodeReply reply : replies) {
			if (reply != null && reply.isConfirmed() && reply.value() instanceof Long told) {
				if (told > 1) {
					id = (id != null) ? id : key.id();
					int ours = this.subscribers.get(reply.node()).isSubscribed(id) ? 1 : 0;
					others = (int) Math.max(others, told - 1 - ours);
				}
				slowest = Math.max(slowest, reply.nanos());
			}
		}
		if (others == 0 && this.queues.isEmpty()) {
			return;
		}
		id = (id != null) ? id : key.id();
		if (others > 0) {
			this.yields.yieldAfterRelease(id, slowest);
		}
		KeyQueue queue = this.queues.get(id);
		if (queue != null) {
			queue.signalHead();
		}
	}

	private Waiter join(String id, boolean tried) {
		while (true) {
			boolean[] created = new boolean[1];
			KeyQueue queue = this.queues.computeIfAbsent(id, (key) -> {
				created[0] = true;
				return new KeyQueue(key);
			});
			Waiter me = new Waiter(queue);
			// the thread that tried and found no queue tries again once a node confirms
			// the subscription: a release between its try and the subscription would
			// otherwise go unheard until the retry delay
			long now = this.ticker.getAsLong();
			me.notBefore = now;
			me.pollAt = now + (tried ? this.nodeTimeoutNanos : 0);
			if (!queue.add(me)) {
				continue;
			}
			this.waiting.incrementAndGet();
			if (created[0]) {
				this.subscribers.forEach((subscriber) -> subscriber.subscribe(id, queue));
			}
			return me;
		}
	}

	private long nextRetryDelayNanos() {
		long mean = this.retryDelayNanos;
		return mean / 2 + ThreadLocalRandom.current().nextLong(mean + 1);
	}

	/**
	 * Wakes every waiting thread: they end with {@link Wake#CLOSED}. Then ends the
	 * subscriptions.
	 */
	@Override
	public void close() {
		this.closed = true;
		this.queues.values().forEach(KeyQueue::wakeAll);
		this.subscribers.forEach(NodeSubscriber::close);
	}

	/** A waiting thread. */
	private static final class Waiter {

		private final Thread thread = Thread.currentThread();

		private final KeyQueue queue;

		/** Set by a release, cleared by the waiter when it tries. */
		private volatile boolean signalled;

		/** When the waiter tries anyway, once at the head. */
		private volatile long pollAt;

		/** Before when it does not try, even when signalled: after a split vote. */
		private long notBefore;

		/** Split votes in a row, the last attempts' outcome. */
		private int splitVotes;

		/**
		 * The {@link ReleaseNotices#releases() release} heard of last when the waiter
		 * last tried: an attempt made after its first notice may have raced it.
		 */
		private volatile long triedInRelease = -1;

		Waiter(KeyQueue queue) {
			this.queue = queue;
		}

	}

	/** The threads waiting for one key, and what they hear from the nodes. */
	private final class KeyQueue implements NodeSubscriber.Listener {

		private final String id;

		private final ReentrantLock lock = new ReentrantLock();

		/** Guarded by {@link #lock}. */
		private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();

		/**
		 * Guarded by {@link #lock}: once empty, a queue is removed and a new one made for
		 * the next waiter.
		 */
		private boolean removed;

		private final ReleaseNotices notices = new ReleaseNotices(LockWaiters.this.quorum.size());

		private volatile @Nullable Waiter head;

		private volatile boolean subscribed;

		KeyQueue(String id) {
			this.id = id;
		}

		boolean add(Waiter waiter) {
			this.lock.lock();
			try {
				if (this.removed) {
					return false;
				}
				this.waiters.addLast(waiter);
				if (this.head == null) {
					this.head = waiter;
				}
				return true;
			}
			finally {
				this.lock.unlock();
			}
		}

		/**
		 * Parks until it is the waiter's turn and there is a reason to try, or until
		 * waiting must end.
		 */
		Wake await(Waiter me, long deadline) {
			while (true) {
				if (LockWaiters.this.closed) {
					return Wake.CLOSED;
				}
				if (me.thread.isInterrupted()) {
					return Wake.INTERRUPTED;
				}
				long now = LockWaiters.this.ticker.getAsLong();
				if (deadline - now <= 0) {
					return Wake.DEADLINE;
				}
				long wakeAt = deadline;
				if (this.head == me) {
					long yieldEnd = LockWaiters.this.yields.end(this.id);
					if (yieldEnd != 0) {
						wakeAt = earlier(wakeAt, yieldEnd);
					}
					else if (me.notBefore - now > 0) {
						wakeAt = earlier(wakeAt, me.notBefore);
					}
					else if (me.signalled || me.pollAt - now <= 0) {
						me.signalled = false;
						me.triedInRelease = this.notices.releases();
						return Wake.TRY;
					}
					else {
						wakeAt = earlier(wakeAt, me.pollAt);
					}
				}
				LockSupport.parkNanos(this, wakeAt - now);
			}
		}

		void leave(Waiter me, boolean won) {
			Waiter next = null;
			boolean empty;
			this.lock.lock();
			try {
				this.waiters.remove(me);
				if (this.head == me) {
					next = this.waiters.peekFirst();
					this.head = next;
					if (next != null) {
						// a winner holds the lock: the next tries when it is released, or
						// after the retry delay
						next.pollAt = LockWaiters.this.ticker.getAsLong() + (won ? nextRetryDelayNanos() : 0);
					}
				}
				empty = this.waiters.isEmpty();
				if (empty) {
					this.removed = true;
					LockWaiters.this.queues.remove(this.id, this);
				}
			}
			finally {
				this.lock.unlock();
			}
			LockWaiters.this.waiting.decrementAndGet();
			if (next != null) {
				LockSupport.unpark(next.thread);
			}
			if (empty) {
				LockWaiters.this.subscribers.forEach((subscriber) -> subscriber.unsubscribe(this.id, this));
			}
		}

		/** Wakes the head to try now. */
		void signalHead() {
			Waiter toWake = this.head;
			if (toWake != null) {
				toWake.signalled = true;
				LockSupport.unpark(toWake.thread);
			}
		}

		/**
		 * A node announced a release of the key: on the first notice of a release by
		 * another instance the head tries now, and any yield ends (whoever it was left
		 * for is done). That notice comes while the release is still on its way to the
		 * other nodes: a head that tried since then may have lost to the very lock being
		 * released, so it tries again once a quorum of nodes has announced it.
		 */
		@Override
		public void released(byte[] value) {
			switch (this.notices.heard(value)) {
				case FIRST -> {
					LockWaiters.this.yields.endNow(this.id);
					signalHead();
				}
				case QUORUM -> {
					Waiter current = this.head;
					if (current != null && current.triedInRelease == this.notices.releases()) {
						signalHead();
					}
				}
				case NONE -> {
					// an echo, or our own release
				}
			}
		}

		@Override
		public void subscribed(int node) {
			if (this.subscribed) {
				return;
			}
			this.subscribed = true;
			signalHead();
		}

		void wakeAll() {
			this.lock.lock();
			try {
				this.waiters.forEach((waiter) -> LockSupport.unpark(waiter.thread));
			}
			finally {
				this.lock.unlock();
			}
		}

	}

	private static long earlier(long a, long b) {
		return (a - b <= 0) ? a : b;
	}

}
