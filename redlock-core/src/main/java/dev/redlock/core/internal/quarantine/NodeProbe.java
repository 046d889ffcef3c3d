package dev.redlock.core.internal.quarantine;

import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.internal.protocol.AcquireReply;
import dev.redlock.core.internal.round.Fanout;
import dev.redlock.core.internal.round.NodeReply;
import dev.redlock.core.internal.round.RoundCommand;
import dev.redlock.core.internal.thread.OnDemandThread;

/**
 * Reads every node now and then, whether this client locks or not, while the restart
 * quarantine is on: each node's clock (judged by the {@link ClockConsensus consensus} of
 * the round, so a clock that stepped and stepped back is seen by any client that reads it
 * in between), what it says of itself ({@link NodeReport}: a restart, a failover, keys it
 * dropped, an evicting configuration) and its {@link NodeMarker marker}, against what
 * this client saw of it. What the quarantine finds is written in the marker (a
 * compare-and-set) for every client to honour, and the marker's epoch is raised when no
 * client did for a probe period, so that a node that goes back to an older state shows a
 * lower epoch than the clients saw. One daemon thread per {@code Redlock}
 * ({@code redlock-probe-N}); a round takes at most the node timeout, per node written to
 * once more.
 */
public final class NodeProbe implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(NodeProbe.class);

	private final List<NodeQuarantine> quarantines;

	private final Fanout fanout;

	/**
	 * How many of the clocks read may be faulty: every node of the voters a quorum can do
	 * without, since a probe reads every node of every voter.
	 */
	private final int faultyAtMost;

	private final long toleranceNanos;

	private final long periodNanos;

	private final ScheduledThreadPoolExecutor executor;

	/** What a probe sends each node: its report, with its own marker. */
	private final RoundCommand probe;

	/** An extra run asked for and not started yet, {@code null} when none. */
	private @Nullable ScheduledFuture<?> extraRun;

	private long lastRunNanos;

	/**
	 * @param quarantines every node's quarantine, in node order
	 * @param fanout sends the probe to every node
	 * @param faultyAtMost how many of the nodes' clocks may be faulty at once
	 * ({@link dev.redlock.core.internal.round.VoterLayout#faultyNodesAtMost})
	 * @param toleranceNanos how far apart the nodes' clocks may read and agree
	 */
	public NodeProbe(List<NodeQuarantine> quarantines, Fanout fanout, int faultyAtMost, long toleranceNanos) {
		this.quarantines = quarantines;
		this.fanout = fanout;
		this.faultyAtMost = faultyAtMost;
		this.toleranceNanos = toleranceNanos;
		this.periodNanos = quarantines.get(0).probePeriodNanos();
		this.probe = probeOf(quarantines);
		String name = OnDemandThread.numbered("redlock-probe-");
		this.executor = new ScheduledThreadPoolExecutor(1, (runnable) -> {
			Thread thread = new Thread(runnable, name);
			thread.setDaemon(true);
			return thread;
		});
		this.executor.setRemoveOnCancelPolicy(true);
		this.executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
	}

	/**
	 * The report's commands, for each node with its own marker key: one command for all
	 * when every node's marker is {@link NodeMarker#KEY}.
	 */
	private static RoundCommand probeOf(List<NodeQuarantine> quarantines) {
		if (quarantines.stream().allMatch((quarantine) -> quarantine.markerKey().equals(NodeMarker.KEY))) {
			return RoundCommand.batch(NodeReport.COMMANDS);
		}
		RoundCommand[] byNode = new RoundCommand[quarantines.size()];
		for (int node = 0; node < byNode.length; node++) {
			byNode[node] = RoundCommand.batch(NodeReport.commands(quarantines.get(node).markerKey()));
		}
		return RoundCommand.perNode(byNode);
	}

	/** Starts probing, a first round now. */
	public void start() {
		this.executor.scheduleWithFixedDelay(this::runGuarded, 0, this.periodNanos, TimeUnit.NANOSECONDS);
	}

	/**
	 * Asks for a round soon (a marker to write down, one found gone): at once, unless one
	 * ran less than a quarter of a period ago, then when that quarter has passed.
	 */
	public synchronized void soon() {
		if (this.extraRun != null || this.executor.isShutdown()) {
			return;
		}
		long wait = Math.max(0, this.lastRunNanos + this.periodNanos / 4 - System.nanoTime());
		this.extraRun = this.executor.schedule(this::runGuarded, wait, TimeUnit.NANOSECONDS);
	}

	private void runGuarded() {
		synchronized (this) {
			this.extraRun = null;
			this.lastRunNanos = System.nanoTime();
		}
		try {
			run();
		}
		catch (Throwable ex) {
			if (!this.executor.isShutdown()) {
				// the next round tries again
				logger.warn("Probing the Redis nodes failed", ex);
			}
		}
	}

	/** One round: reads every node, judges, writes what is to be written. */
	void run() {
		MarkerWatch.Memory[] before = new MarkerWatch.Memory[this.quarantines.size()];
		for (int i = 0; i < before.length; i++) {
			before[i] = this.quarantines.get(i).markers().memory();
		}
		ClockReadings clocks = new ClockReadings(this.quarantines, this.faultyAtMost, this.toleranceNanos,
				NodeProbe::clockOf, System::nanoTime);
		long askedAt = System.nanoTime();
		NodeReply[] replies = this.fanout.execute(this.probe, null, null);
		clocks.read(replies);
		for (NodeReply reply : replies) {
			if (reply.kind() != NodeReply.Kind.REPLIED || !(reply.value() instanceof List<?> values)) {
				continue;
			}
			NodeReport report = NodeReport.of(values);
			NodeQuarantine quarantine = this.quarantines.get(reply.node());
			MarkerWatch.MarkerWrite write = quarantine.inspect(report, System.nanoTime(), before[reply.node()],
					askedAt);
			if (write != null) {
				write(reply.node(), write, report.nodeMicros() / 1_000);
			}
		}
	}

	private void write(int node, MarkerWatch.MarkerWrite write, long nodeMillis) {
		boolean[] selected = new boolean[this.quarantines.size()];
		selected[node] = true;
		NodeReply written = this.fanout.execute(
				RoundCommand.of(QuarantineGreeting.writeMarker(write, this.quarantines.get(node).markerKey())),
				selected, null)[node];
		if (written.kind() == NodeReply.Kind.REPLIED) {
			this.quarantines.get(node).markers().written(write, written.value(), nodeMillis, System.nanoTime());
		}
	}

	/** The node's {@code TIME} in a probe's replies. */
	private static long clockOf(@Nullable Object value) {
		return (value instanceof List<?> values && values.size() == NodeReport.COMMANDS.size())
				? AcquireReply.timeMicros(values.get(5)) : -1;
	}

	/**
	 * Stops probing: a round under way ends first, within its bound.
	 */
	@Override
	public void close() {
		this.executor.shutdown();
		try {
			if (!this.executor.awaitTermination(2 * this.fanout.timeoutNanos(), TimeUnit.NANOSECONDS)) {
				this.executor.shutdownNow();
			}
		}
		catch (InterruptedException ex) {
			this.executor.shutdownNow();
			Thread.currentThread().interrupt();
		}
	}

}
