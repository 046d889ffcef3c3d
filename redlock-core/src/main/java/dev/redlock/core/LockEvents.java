package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Predicate;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.RedlockListener.AcquireEvent;
import dev.redlock.core.RedlockListener.ExtendEvent;
import dev.redlock.core.RedlockListener.LeaseLostEvent;
import dev.redlock.core.RedlockListener.NodeCommand;
import dev.redlock.core.RedlockListener.NodeOutcome;
import dev.redlock.core.RedlockListener.NodeRequestEvent;
import dev.redlock.core.RedlockListener.ReleaseEvent;

/**
 * Tells the listeners what happened, so that a failing listener can never stop the lock's work, and keeps per-node
 * counters.
 */
final class LockEvents {

	private static final Logger logger = LoggerFactory.getLogger(LockEvents.class);

	private final List<RedlockListener> listeners;

	private final List<RedisNodeUri> nodes;

	private final LongAdder[][] counters;

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
	 * @param replies the round's replies, {@code null} for nodes not asked; replies not awaited are not reported
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
				case ERROR_REPLY, UNREACHABLE, NOT_AWAITED -> NodeOutcome.ERROR;
			};
			this.counters[reply.node()][outcome.ordinal()].increment();
			if (!this.listeners.isEmpty()) {
				NodeRequestEvent event = new NodeRequestEvent(this.nodes.get(reply.node()).hostAndPort(), command, outcome,
						Duration.ofNanos(reply.nanos()));
				emit((listener) -> listener.nodeRequestFinished(event));
			}
		}
	}

	/** Whether anyone listens: when nobody does, events need not be built. */
	boolean hasListeners() {
		return !this.listeners.isEmpty();
	}

	void acquireFinished(AcquireEvent event) {
		emit((listener) -> listener.acquireFinished(event));
	}

	void leaseReleased(ReleaseEvent event) {
		emit((listener) -> listener.leaseReleased(event));
	}

	void leaseExtended(ExtendEvent event) {
		emit((listener) -> listener.leaseExtended(event));
	}

	void leaseLost(LeaseLostEvent event) {
		emit((listener) -> listener.leaseLost(event));
	}

	/** Tells every listener; one that throws is logged and skipped. */
	private void emit(Consumer<RedlockListener> call) {
		for (RedlockListener listener : this.listeners) {
			try {
				call.accept(listener);
			}
			catch (RuntimeException ex) {
				logger.warn("Redlock listener {} failed; the lock's work goes on", listener, ex);
			}
		}
	}

	List<NodeStatistics> statistics() {
		List<NodeStatistics> statistics = new ArrayList<>(this.nodes.size());
		for (int i = 0; i < this.nodes.size(); i++) {
			LongAdder[] node = this.counters[i];
			statistics.add(new NodeStatistics(this.nodes.get(i).redacted(), node[NodeOutcome.OK.ordinal()].sum(),
					node[NodeOutcome.REJECTED.ordinal()].sum(), node[NodeOutcome.TIMEOUT.ordinal()].sum(),
					node[NodeOutcome.ERROR.ordinal()].sum()));
		}
		return statistics;
	}

}
