package dev.redlock.core.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.NodeStatistics;
import dev.redlock.core.QuarantineReason;
import dev.redlock.core.RedlockListener;
import dev.redlock.core.RedlockListener.AcquireEvent;
import dev.redlock.core.RedlockListener.ExtendEvent;
import dev.redlock.core.RedlockListener.LeaseLostEvent;
import dev.redlock.core.RedlockListener.NodeCommand;
import dev.redlock.core.RedlockListener.NodeOutcome;
import dev.redlock.core.RedlockListener.NodeQuarantineEvent;
import dev.redlock.core.RedlockListener.NodeRequestEvent;
import dev.redlock.core.RedlockListener.ReleaseEvent;
import dev.redlock.core.internal.round.NodeReply;
import dev.redlock.core.internal.transport.RedisNodeUri;

/**
 * Tells the listeners what happened, so that a failing listener can never stop the lock's
 * work, and keeps per-node counters.
 */
public final class LockEvents {

	private static final Logger logger = LoggerFactory.getLogger(LockEvents.class);

	private final List<RedlockListener> listeners;

	private final List<RedisNodeUri> nodes;

	private final LongAdder[][] counters;

	private final LongAdder listenerFailures = new LongAdder();

	private static final long FAILURE_LOG_INTERVAL_NANOS = TimeUnit.MINUTES.toNanos(1);

	/**
	 * {@link System#nanoTime()} of the last warning about a failed listener, 0 before the
	 * first.
	 */
	private volatile long lastFailureLogged;

	LockEvents(List<RedlockListener> listeners, List<RedisNodeUri> nodes) {
		this.listeners = List.copyOf(listeners);
		this.nodes = nodes;
		this.counters = new LongAdder[nodes.size()][NodeOutcome.values().length];
		for (LongAdder[] node : this.counters) {
			for (int i = 0; i < node.length; i++) {
				node[i] = new LongAdder();
			}
		}
	}

	/**
	 * Counts a round's replies and reports each to the listeners.
	 * @param command what was asked
	 * @param replies the round's replies, {@code null} for nodes not asked; replies not
	 * awaited are not reported
	 * @param success whether a reply means success (else a plain reply means "rejected")
	 */
	void nodeReplies(NodeCommand command, NodeReply[] replies, Predicate<NodeReply> success) {
		for (NodeReply reply : replies) {
			if (reply == null || reply.kind() == NodeReply.Kind.NOT_AWAITED) {
				continue;
			}
			NodeOutcome outcome = switch (reply.kind()) {
				case REPLIED -> success.test(reply) ? NodeOutcome.OK : NodeOutcome.REJECTED;
				case TIMEOUT -> NodeOutcome.TIMEOUT;
				case ERROR_REPLY, UNREACHABLE, AUTH_FAILED, INTERRUPTED, NOT_AWAITED -> NodeOutcome.ERROR;
			};
			this.counters[reply.node()][outcome.ordinal()].increment();
			if (!this.listeners.isEmpty()) {
				NodeRequestEvent event = new NodeRequestEvent(this.nodes.get(reply.node()).name(), command, outcome,
						Duration.ofNanos(reply.nanos()));
				emit((listener) -> listener.nodeRequestFinished(event));
			}
		}
	}

	/** Whether anyone listens: when nobody does, events need not be built. */
	public boolean hasListeners() {
		return !this.listeners.isEmpty();
	}

	public void acquireFinished(AcquireEvent event) {
		emit((listener) -> listener.acquireFinished(event));
	}

	public void leaseReleased(ReleaseEvent event) {
		emit((listener) -> listener.leaseReleased(event));
	}

	public void leaseExtended(ExtendEvent event) {
		emit((listener) -> listener.leaseExtended(event));
	}

	public void leaseLost(LeaseLostEvent event) {
		emit((listener) -> listener.leaseLost(event));
	}

	void nodeQuarantined(int node, QuarantineReason reason, Duration duration) {
		if (!this.listeners.isEmpty()) {
			NodeQuarantineEvent event = new NodeQuarantineEvent(this.nodes.get(node).name(), reason, duration);
			emit((listener) -> listener.nodeQuarantined(event));
		}
	}

	/**
	 * Tells every listener. Whatever one throws, an {@link Error} included (an
	 * {@code AssertionError}, a {@code NoSuchMethodError} from a mismatched library, a
	 * {@code StackOverflowError}), is counted and logged, and nothing else: a listener
	 * can never break a round, a release or a connection.
	 */
	private void emit(Consumer<RedlockListener> call) {
		for (RedlockListener listener : this.listeners) {
			try {
				call.accept(listener);
			}
			catch (Throwable ex) {
				listenerFailed(listener, ex);
			}
		}
	}

	private void listenerFailed(RedlockListener listener, Throwable ex) {
		this.listenerFailures.increment();
		try {
			long now = System.nanoTime();
			long last = this.lastFailureLogged;
			// one warning with its stack trace a minute at most: a listener that fails on
			// every event must not flood
			if (last == 0 || now - last >= FAILURE_LOG_INTERVAL_NANOS) {
				this.lastFailureLogged = now;
				logger.warn("Redlock listener {} failed ({} failures so far, logged once a minute); the lock's work "
						+ "goes on", listener, this.listenerFailures.sum(), ex);
			}
			else {
				logger.debug("Redlock listener {} failed; the lock's work goes on", listener, ex);
			}
		}
		catch (Throwable logging) {
			// logging itself failed (e.g. a StackOverflowError at the very top of the
			// stack): the count remains
		}
	}

	/**
	 * Returns how many times a listener threw.
	 * @return the count since this instance was built
	 */
	public long listenerFailures() {
		return this.listenerFailures.sum();
	}

	/**
	 * How each node has answered so far.
	 * @param masters the address of each voter's master as known now, by node index
	 */
	public List<NodeStatistics> statistics(IntFunction<@Nullable String> masters) {
		List<NodeStatistics> statistics = new ArrayList<>(this.nodes.size());
		for (int i = 0; i < this.nodes.size(); i++) {
			LongAdder[] node = this.counters[i];
			statistics.add(new NodeStatistics(this.nodes.get(i).redacted(), node[NodeOutcome.OK.ordinal()].sum(),
					node[NodeOutcome.REJECTED.ordinal()].sum(), node[NodeOutcome.TIMEOUT.ordinal()].sum(),
					node[NodeOutcome.ERROR.ordinal()].sum(), this.nodes.get(i).kind(), masters.apply(i)));
		}
		return statistics;
	}

}
