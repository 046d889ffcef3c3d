package dev.redlock.core.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.internal.protocol.LockScripts;
import dev.redlock.core.internal.protocol.RawArgument;
import dev.redlock.core.internal.round.BatchReplies;
import dev.redlock.core.internal.round.Fanout;
import dev.redlock.core.internal.round.NodeReply;
import dev.redlock.core.internal.round.RoundCommand;
import dev.redlock.core.internal.thread.RenewalScheduler;
import dev.redlock.core.internal.transport.NodeConnectionPool;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;

/**
 * Removes lock values from a node that a round could not clean up: a release whose reply
 * did not come (a slow or frozen node), a release that found nothing to delete while the
 * acquisition's {@code SET}, not waited for, may still land behind it, a release or a
 * lost acquisition's clean-up that could not be written (no connection in time). Retried
 * off the caller's path, on the node's own late-reply thread, up to {@value #MAX_BATCH}
 * values per round trip, until the node gives a definite answer or the value's TTL has
 * passed (the node then dropped it by itself). Each node has one queue: a node that does
 * not answer costs one attempt per pause (from the node timeout, doubling up to a
 * second), however many values wait for it. Only ever compare-and-delete: a value someone
 * else holds by then is left alone.
 */
public final class ValueCleanup {

	private static final Logger logger = LoggerFactory.getLogger(ValueCleanup.class);

	private static final long MAX_PAUSE_NANOS = TimeUnit.SECONDS.toNanos(1);

	/**
	 * The most values kept waiting for one node; beyond it the oldest are dropped (they
	 * expire with their TTL).
	 */
	static final int MAX_WAITING_PER_NODE = 10_000;

	/**
	 * The most values removed from a node in one round trip: a few tens of kilobytes
	 * written at once.
	 */
	static final int MAX_BATCH = 128;

	private final Fanout fanout;

	private final List<NodeConnectionPool> pools;

	private final RenewalScheduler scheduler;

	private final long firstPauseNanos;

	private final List<NodeQueue> queues;

	/**
	 * The values waiting, by key: what a new acquisition of the key may find of ours on
	 * the nodes.
	 */
	private final ConcurrentHashMap<RawArgument, Set<Value>> byKey = new ConcurrentHashMap<>();

	public ValueCleanup(Fanout fanout, List<NodeConnectionPool> pools, RenewalScheduler scheduler,
			long nodeTimeoutNanos) {
		this.fanout = fanout;
		this.pools = pools;
		this.scheduler = scheduler;
		this.firstPauseNanos = nodeTimeoutNanos;
		List<NodeQueue> queues = new ArrayList<>(pools.size());
		for (int i = 0; i < pools.size(); i++) {
			boolean[] only = new boolean[pools.size()];
			only[i] = true;
			queues.add(new NodeQueue(i, only));
		}
		this.queues = List.copyOf(queues);
	}

	/**
	 * Removes the value from the node, later, until it is confirmed or has expired.
	 * @param node the node's index
	 * @param key the lock key
	 * @param value the lock value to remove
	 * @param expiresAtNanos {@link System#nanoTime()} by which the value has expired on
	 * the node anyway
	 */
	public void remove(int node, RawArgument key, RawArgument value, long expiresAtNanos) {
		NodeQueue queue = this.queues.get(node);
		Value waiting = new Value(node, key, value, expiresAtNanos);
		// added inside compute: a set emptied and dropped by forget() at the same moment
		// is never added to
		this.byKey.compute(key, (k, waitingForKey) -> {
			Set<Value> values = (waitingForKey != null) ? waitingForKey : ConcurrentHashMap.newKeySet();
			values.add(waiting);
			return values;
		});
		queue.values.add(waiting);
		if (queue.size.incrementAndGet() > MAX_WAITING_PER_NODE) {
			Value oldest = queue.values.poll();
			if (oldest != null) {
				queue.size.decrementAndGet();
				forget(oldest);
			}
		}
		if (queue.scheduled.compareAndSet(false, true)) {
			schedule(queue, this.firstPauseNanos);
		}
	}

	/**
	 * Removes the value from the node like
	 * {@link #remove(int, RawArgument, RawArgument, long)}, but not before a given time:
	 * a release that kept the lock for a minimum hold must not end it early on the nodes
	 * it missed.
	 * @param notBeforeNanos {@link System#nanoTime()} from which it may be removed
	 */
	public void remove(int node, RawArgument key, RawArgument value, long expiresAtNanos, long notBeforeNanos) {
		long waitNanos = notBeforeNanos - System.nanoTime();
		if (waitNanos <= 0) {
			remove(node, key, value, expiresAtNanos);
			return;
		}
		try {
			this.scheduler.schedule(() -> remove(node, key, value, expiresAtNanos), waitNanos);
		}
		catch (IllegalStateException ex) {
			// closed: the value expires with its TTL
		}
	}

	private void schedule(NodeQueue queue, long pauseNanos) {
		try {
			this.scheduler.schedule(() -> this.pools.get(queue.node).readLate(() -> run(queue, pauseNanos), () -> {
				// closed: the values expire with their TTL
			}), pauseNanos);
		}
		catch (IllegalStateException ex) {
			// closed: the values expire with their TTL
		}
	}

	/**
	 * Removes what waits for the node, a batch per round trip, until one attempt fails;
	 * then tries again after a longer pause. After each batch the node's late-reply
	 * thread reads the replies queued meanwhile before the next.
	 */
	private void run(NodeQueue queue, long pauseNanos) {
		NodeConnectionPool pool = this.pools.get(queue.node);
		if (pool.everyConnectionOwesLateReplies()) {
			// they come back as this thread reads the replies queued behind this task:
			// waiting here for one would wait out the node timeout
			continueLater(queue, pauseNanos);
			return;
		}
		List<Value> batch = liveBatch(queue);
		if (!batch.isEmpty()) {
			if (!removeBatch(queue, batch)) {
				schedule(queue, Math.min(MAX_PAUSE_NANOS, pauseNanos * 2));
				return;
			}
			if (!queue.values.isEmpty()) {
				continueLater(queue, this.firstPauseNanos);
				return;
			}
		}
		queue.scheduled.set(false);
		// a value added while the flag was still set would otherwise wait for the next
		// one
		if (!queue.values.isEmpty() && queue.scheduled.compareAndSet(false, true)) {
			schedule(queue, this.firstPauseNanos);
		}
	}

	/** Runs the node's clean-up again after the tasks queued on its late-reply thread. */
	private void continueLater(NodeQueue queue, long pauseNanos) {
		this.pools.get(queue.node).readLate(() -> run(queue, pauseNanos), () -> {
			// closed: the values expire with their TTL
		});
	}

	/**
	 * The values at the head of the node's queue, at most {@link #MAX_BATCH}, those that
	 * have expired by now dropped on the way.
	 */
	private List<Value> liveBatch(NodeQueue queue) {
		List<Value> batch = new ArrayList<>();
		long now = System.nanoTime();
		for (Iterator<Value> values = queue.values.iterator(); values.hasNext() && batch.size() < MAX_BATCH;) {
			Value value = values.next();
			if (now - value.expiresAtNanos < 0) {
				batch.add(value);
			}
			else {
				dequeue(queue, value);
			}
		}
		return batch;
	}

	/**
	 * Sends the batch to the node in one round trip; each value the node answers for
	 * (removed, or found gone or someone else's) stops waiting.
	 * @return whether the node answered for every value
	 */
	private boolean removeBatch(NodeQueue queue, List<Value> batch) {
		List<CommandArguments> calls = new ArrayList<>(batch.size());
		batch.forEach((value) -> calls.add(value.release()));
		NodeReply reply;
		try {
			reply = this.fanout.execute(RoundCommand.batch(calls), queue.only, null)[queue.node];
		}
		catch (RuntimeException ex) {
			logger.warn("Late clean-up of node {} failed; tried again later", queue.node, ex);
			return false;
		}
		NodeReply unanswered = null;
		for (int part = 0; part < batch.size(); part++) {
			NodeReply answer = BatchReplies.part(reply, part, batch.size());
			if (answer.isDefinite()) {
				dequeue(queue, batch.get(part));
			}
			else if (unanswered == null) {
				unanswered = answer;
			}
		}
		if (unanswered != null) {
			logger.debug("Late clean-up of node {} not confirmed ({}); tried again later", queue.node,
					unanswered.describeFailure());
		}
		return unanswered == null;
	}

	/**
	 * Makes one last attempt to remove every value still waiting, before the connections
	 * close: each node's values are tried on its late-reply thread (after any reply that
	 * thread still has to read), until one attempt fails. What is not removed by the
	 * deadline expires with its TTL.
	 * @param timeoutNanos how long to wait for the attempts
	 */
	void finish(long timeoutNanos) {
		List<NodeQueue> waiting = this.queues.stream().filter((queue) -> !queue.values.isEmpty()).toList();
		if (waiting.isEmpty()) {
			return;
		}
		CountDownLatch done = new CountDownLatch(waiting.size());
		for (NodeQueue queue : waiting) {
			this.pools.get(queue.node).readLate(() -> {
				try {
					removeOnce(queue);
				}
				finally {
					done.countDown();
				}
			}, done::countDown);
		}
		try {
			done.await(timeoutNanos, TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Tries each value waiting for the node once, a batch per round trip, stopping at the
	 * first batch the node does not answer for in full.
	 */
	private void removeOnce(NodeQueue queue) {
		for (List<Value> batch = liveBatch(queue); !batch.isEmpty(); batch = liveBatch(queue)) {
			// tried once, whatever the answer
			batch.forEach((value) -> dequeue(queue, value));
			if (!removeBatch(queue, batch)) {
				return;
			}
		}
	}

	/**
	 * Our values of a key still waiting to be removed, and from which nodes: those an
	 * acquisition of the key would find in its way.
	 * @return each value with one flag per node; empty when none waits (the usual case)
	 */
	Map<RawArgument, boolean[]> waitingFor(RawArgument key) {
		if (this.byKey.isEmpty()) {
			// every acquisition asks: no hashing of its key when nothing waits
			return Map.of();
		}
		Set<Value> waiting = this.byKey.get(key);
		if (waiting == null) {
			return Map.of();
		}
		Map<RawArgument, boolean[]> nodes = new HashMap<>();
		long now = System.nanoTime();
		for (Value value : waiting) {
			if (now - value.expiresAtNanos < 0) {
				nodes.computeIfAbsent(value.value, (v) -> new boolean[this.queues.size()])[value.node] = true;
			}
		}
		return nodes;
	}

	/**
	 * Stops waiting to remove a value from a node: it was removed there by other means.
	 */
	void removed(int node, RawArgument key, RawArgument value) {
		Set<Value> waiting = this.byKey.get(key);
		if (waiting == null) {
			return;
		}
		NodeQueue queue = this.queues.get(node);
		for (Value candidate : waiting) {
			if (candidate.node == node && candidate.value.equals(value)) {
				dequeue(queue, candidate);
			}
		}
	}

	private void dequeue(NodeQueue queue, Value value) {
		if (queue.values.remove(value)) {
			queue.size.decrementAndGet();
		}
		forget(value);
	}

	private void forget(Value value) {
		this.byKey.computeIfPresent(value.key, (key, waiting) -> {
			waiting.remove(value);
			return waiting.isEmpty() ? null : waiting;
		});
	}

	/** How many values wait to be removed, over every node. */
	public int queued() {
		return this.queues.stream().mapToInt((queue) -> queue.size.get()).sum();
	}

	/** The values waiting for one node. */
	private static final class NodeQueue {

		private final int node;

		private final boolean[] only;

		private final ConcurrentLinkedQueue<Value> values = new ConcurrentLinkedQueue<>();

		private final AtomicInteger size = new AtomicInteger();

		private final AtomicBoolean scheduled = new AtomicBoolean();

		NodeQueue(int node, boolean[] only) {
			this.node = node;
			this.only = only;
		}

	}

	/**
	 * A lock value to remove from a node, and when it expires anyway; equal only to
	 * itself, so the same value queued twice is forgotten once per entry.
	 */
	private static final class Value {

		private final int node;

		private final RawArgument key;

		private final RawArgument value;

		private final long expiresAtNanos;

		Value(int node, RawArgument key, RawArgument value, long expiresAtNanos) {
			this.node = node;
			this.key = key;
			this.value = value;
			this.expiresAtNanos = expiresAtNanos;
		}

		CommandArguments release() {
			return LockScripts.call(Command.EVAL, LockScripts.DISCARD.source(), this.key, this.value);
		}

	}

}
