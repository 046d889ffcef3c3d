package dev.redlock.core.internal.quarantine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.helpers.NOPLogger;

import dev.redlock.core.RedlockSettings;
import dev.redlock.core.internal.AcquireAttempt;
import dev.redlock.core.internal.round.NodeReply;
import dev.redlock.core.internal.round.Quorum;
import dev.redlock.core.internal.transport.RedisNodeUri;

/**
 * A client of simulated nodes that judges them with the library's own code: its
 * {@link NodeQuarantine quarantines} and {@link MarkerWatch marker watches}, a
 * {@link NodeJudge} for each acquisition round, {@link ClockReadings} and
 * {@link NodeQuarantine#inspect} for each probe and greeting, all on a monotonic clock
 * that the simulation drives ({@link SimTime}, plus this client's own offset). What it
 * does not take from the library is the wire and the threads: replies are built from the
 * simulated nodes' state, in the order the simulation chooses, and a probe runs when the
 * simulation says.
 */
final class SimClient {

	/**
	 * Time between a command's write and its execution, and between that and its read.
	 */
	static final long HOP_NANOS = 40_000;

	private final SimTime time;

	private final List<SimNode> nodes;

	private final long skewNanos;

	private final List<NodeQuarantine> quarantines = new ArrayList<>();

	private final boolean[] greeted;

	private final Quorum quorum;

	private final long toleranceNanos;

	/**
	 * By node, how long a grant's reply waits for replicas' acknowledgements after the
	 * node ran it ({@code WAIT}), 0 for none.
	 */
	private long[] replicaWaits;

	/**
	 * @param settings the client's settings, the restart quarantine on
	 * @param toleranceNanos the clock tolerance its judge applies: the settings' but to
	 * show what happens without the guard
	 * @param skewNanos its monotonic clock minus true time
	 */
	SimClient(SimTime time, List<SimNode> nodes, RedlockSettings settings, long toleranceNanos, long skewNanos) {
		this.time = time;
		this.nodes = nodes;
		this.skewNanos = skewNanos;
		this.quorum = new Quorum(nodes.size());
		this.toleranceNanos = toleranceNanos;
		this.greeted = new boolean[nodes.size()];
		this.replicaWaits = new long[nodes.size()];
		LongSupplier ticker = this::monotonicNanos;
		for (SimNode node : nodes) {
			this.quarantines.add(new NodeQuarantine(RedisNodeUri.parse("redis://127.0.0.1:" + (7000 + node.index)),
					settings.restartQuarantine(), ticker, NOPLogger.NOP_LOGGER));
		}
	}

	/**
	 * Makes the nodes' replies to acquisition rounds wait for replicas, as a voter with
	 * {@code ?waitReplicas} does.
	 * @param nanosByNode how long each node's reply waits after it ran the round, 0 for
	 * none
	 */
	void waitForReplicas(long[] nanosByNode) {
		this.replicaWaits = nanosByNode.clone();
	}

	/** This client's monotonic clock now. */
	long monotonicNanos() {
		return this.time.now() + this.skewNanos;
	}

	NodeQuarantine quarantine(int node) {
		return this.quarantines.get(node);
	}

	/** The node's connections broke (it restarted, or went back to a snapshot). */
	void disconnected(int node) {
		this.greeted[node] = false;
	}

	/**
	 * One acquisition round: {@code SET NX PX}, {@code TIME} and {@code GET} of the
	 * marker on the given nodes, their replies read in that order; the round ends as the
	 * library's early exit ends it.
	 * @param order the nodes that receive the command, in the order their replies are
	 * read; the others never answer
	 * @return what the round found
	 */
	Round acquire(String key, String value, long ttlNanos, int[] order) {
		for (int node : order) {
			greetIfNew(node);
		}
		long start = this.time.now();
		NodeJudge judge = new NodeJudge(this.quarantines, this.quorum, this.toleranceNanos, this::monotonicNanos);
		NodeReply[] replies = new NodeReply[this.nodes.size()];
		boolean[] everCounted = new boolean[this.nodes.size()];
		boolean[] granted = new boolean[this.nodes.size()];
		long ttlMillis = Duration.ofNanos(ttlNanos).toMillis();
		boolean won = false;
		boolean settled = false;
		for (int position = 0; position < order.length && !settled; position++) {
			int node = order[position];
			SimNode simNode = this.nodes.get(node);
			long executed = start + (2L * position + 1) * HOP_NANOS;
			granted[node] = simNode.setNx(key, value, ttlMillis, executed);
			String marker = simNode.get(NodeMarker.KEY, executed);
			List<Object> reply = new ArrayList<>(3);
			reply.add(granted[node] ? SimNode.bytes("OK") : null);
			reply.add(simNode.timeReply(executed));
			reply.add((marker != null) ? SimNode.bytes(marker) : null);
			long waited = this.replicaWaits[node];
			// read in the order given: after the replies read before it
			long read = Math.max(executed + HOP_NANOS + waited, this.time.now());
			this.time.set(read);
			replies[node] = (waited > 0) ? NodeReply.repliedAfterWait(node, reply, read - start, waited)
					: NodeReply.replied(node, reply, read - start);
			judge.read(replies);
			int counting = 0;
			int pending = 0;
			int answered = 0;
			for (NodeReply candidate : replies) {
				if (candidate == null) {
					continue;
				}
				answered++;
				byte verdict = AcquireAttempt.isGrant(candidate, false) ? judge.judge(candidate) : NodeJudge.REFUSED;
				if (verdict == NodeJudge.COUNTS) {
					counting++;
					everCounted[candidate.node()] = true;
				}
				else if (verdict == NodeJudge.PENDING) {
					pending++;
				}
			}
			won = this.quorum.reached(counting);
			settled = this.quorum.settled(counting, answered - counting - pending);
		}
		return new Round(won, granted, everCounted, start);
	}

	/**
	 * A probe's round, as {@link NodeProbe#run()} makes it: every node's report read at
	 * once, the clocks judged together, each node inspected and its marker written when
	 * the quarantine says so.
	 */
	void probe() {
		long start = this.time.now();
		MarkerWatch.Memory[] before = new MarkerWatch.Memory[this.nodes.size()];
		for (int i = 0; i < before.length; i++) {
			before[i] = this.quarantines.get(i).markers().memory();
		}
		ClockReadings clocks = new ClockReadings(this.quarantines, this.quorum.tolerated(), this.toleranceNanos,
				(value) -> ((NodeReport) value).nodeMicros(), this::monotonicNanos);
		NodeReply[] replies = new NodeReply[this.nodes.size()];
		for (int node = 0; node < replies.length; node++) {
			long executed = start + (2L * node + 1) * HOP_NANOS;
			replies[node] = NodeReply.replied(node, this.nodes.get(node).report(executed),
					executed + HOP_NANOS - start);
		}
		this.time.set(start + (2L * replies.length) * HOP_NANOS);
		clocks.read(replies);
		for (NodeReply reply : replies) {
			inspect(reply.node(), (NodeReport) reply.value(), before[reply.node()]);
		}
	}

	/**
	 * What a new connection's greeting does with the quarantine, as
	 * {@link QuarantineGreeting} does: the node's report inspected, the marker written
	 * when the quarantine says so.
	 */
	private void greetIfNew(int node) {
		if (this.greeted[node]) {
			return;
		}
		this.greeted[node] = true;
		MarkerWatch.Memory before = this.quarantines.get(node).markers().memory();
		long executed = this.time.now() + HOP_NANOS;
		NodeReport report = this.nodes.get(node).report(executed);
		this.time.set(executed + HOP_NANOS);
		inspect(node, report, before);
	}

	private void inspect(int node, NodeReport report, MarkerWatch.Memory before) {
		NodeQuarantine quarantine = this.quarantines.get(node);
		MarkerWatch.MarkerWrite write = quarantine.inspect(report, monotonicNanos(), before, monotonicNanos());
		if (write != null) {
			long executed = this.time.now() + HOP_NANOS;
			@Nullable String written = this.nodes.get(node)
				.writeMarker(write.expected(), write.marker().head(), write.marker().evidence(), executed);
			this.time.set(executed + HOP_NANOS);
			quarantine.markers()
				.written(write, (written != null) ? SimNode.bytes(written) : null, report.nodeMicros() / 1_000,
						monotonicNanos());
		}
	}

	/**
	 * What one round found.
	 *
	 * @param won whether the client won the lock
	 * @param granted which nodes set the key
	 * @param everCounted which nodes' grants counted at some point of the round
	 * @param start when the round started, in true time
	 */
	record Round(boolean won, boolean[] granted, boolean[] everCounted, long start) {
	}

	/** The simulation's true time, which the simulation moves. */
	static final class SimTime {

		private long now;

		SimTime(long now) {
			this.now = now;
		}

		long now() {
			return this.now;
		}

		void set(long now) {
			this.now = now;
		}

		void advance(long nanos) {
			this.now += nanos;
		}

	}

}
