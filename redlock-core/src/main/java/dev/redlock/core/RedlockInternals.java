package dev.redlock.core;

import java.util.List;

import dev.redlock.core.internal.AcquireRound;
import dev.redlock.core.internal.NodeGroup;
import dev.redlock.core.internal.lease.HeldLeases;
import dev.redlock.core.internal.lease.LeaseSupport;
import dev.redlock.core.internal.thread.OnDemandThread;
import dev.redlock.core.internal.thread.RenewalScheduler;

/**
 * The parts behind a {@link Redlock}, for tests that look inside.
 *
 * @param group the nodes
 * @param round the acquisition round
 * @param held the leases held
 * @param renewals the renewal thread
 * @param leases what the leases share
 */
record RedlockInternals(NodeGroup group, AcquireRound round, HeldLeases<Lease> held, RenewalScheduler renewals,
		LeaseSupport leases) {

	/**
	 * Turns the second round of fenced acquisitions off or on; off only in the test that
	 * shows why it is needed.
	 */
	void confirmTokens(boolean confirm) {
		this.round.confirmTokens(confirm);
	}

	/** How many idle connections to a node are kept now. */
	int idleConnections(int node) {
		return this.group.pools().get(node).idleCount();
	}

	/**
	 * How many connections to a node are borrowed now: in a round, or waiting for late
	 * replies.
	 */
	int connectionsInUse(int node) {
		return this.group.pools().get(node).connectionsInUse();
	}

	/** How many borrowers of a node wait for a connection being opened. */
	int awaitingOpen(int node) {
		return this.group.pools().get(node).awaitingOpen();
	}

	/** How many release rounds are out now. */
	int releaseRoundsOut() {
		return this.leases.releaseBatches().roundsOut();
	}

	/** How many releases wait to go together in the next round. */
	int releasesWaiting() {
		return this.leases.releaseBatches().waiting();
	}

	/** How many runs the renewal thread has scheduled. */
	int scheduledRuns() {
		return this.renewals.scheduledRuns();
	}

	/** How long each node is expected to take to answer, in milliseconds. */
	List<Double> expectedLatencies() {
		return this.group.pools().stream().map((pool) -> pool.latency().expectedNanos() / 1e6).toList();
	}

	/** How many leases are recorded as held, without sweeping. */
	int heldCount() {
		return this.held.size();
	}

	/** The thread that runs loss callbacks the renewal thread found. */
	OnDemandThread lossCallbacks() {
		return this.leases.lossCallbacks();
	}

}
