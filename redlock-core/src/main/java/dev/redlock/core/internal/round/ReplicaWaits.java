package dev.redlock.core.internal.round;

import java.util.concurrent.TimeUnit;

/**
 * Which nodes count a write only once some of their replicas acknowledged it: the masters
 * of Sentinel voters with {@code ?waitReplicas=n}. A write that counts (a grant, an
 * extension, a fencing counter raised) goes to such a node with {@code WAIT n timeout}
 * right behind it on the same connection. The wait is part of the round: its timeout is
 * half the round's, so that a node whose replicas do not answer says so before the
 * round's deadline (a server ends a {@code WAIT} up to a tick of its {@code hz} late, 100
 * ms at the default 10); too few acknowledgements read as {@link NotReplicatedException}.
 * Nodes of other voters get the command as it is.
 */
public final class ReplicaWaits {

	/** No node waits: commands go as they are. */
	public static final ReplicaWaits NONE = new ReplicaWaits(new int[0]);

	/** How many replicas each node waits for, by node index; 0 for none. */
	private final int[] replicas;

	private final boolean any;

	private ReplicaWaits(int[] replicas) {
		this.replicas = replicas;
		boolean any = false;
		for (int count : replicas) {
			any |= count > 0;
		}
		this.any = any;
	}

	/**
	 * @param replicas how many replicas each node waits for, by node index; 0 for none
	 * @return the waits, {@link #NONE} when no node waits
	 */
	public static ReplicaWaits of(int[] replicas) {
		ReplicaWaits waits = new ReplicaWaits(replicas.clone());
		return waits.any ? waits : NONE;
	}

	/** Whether any node waits for its replicas. */
	public boolean any() {
		return this.any;
	}

	/**
	 * How many replicas a node waits for.
	 * @param node the node's index
	 * @return the count, 0 when it waits for none
	 */
	public int of(int node) {
		return (node < this.replicas.length) ? this.replicas[node] : 0;
	}

	/**
	 * A write that counts, as each node gets it: behind {@code WAIT} on the nodes that
	 * wait for replicas, the command itself (the same instance, at no cost) when none
	 * does.
	 * @param command the write
	 * @param fanout the fanout whose round sends it: half its timeout is {@code WAIT}'s
	 * @return the command to send
	 */
	public RoundCommand counted(RoundCommand command, Fanout fanout) {
		if (!this.any) {
			return command;
		}
		long millis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(fanout.timeoutNanos() / 2));
		RoundCommand[] byNode = new RoundCommand[this.replicas.length];
		for (int node = 0; node < byNode.length; node++) {
			RoundCommand own = command.forNodeIfAny(node);
			byNode[node] = (own != null && this.replicas[node] > 0) ? own.awaiting(this.replicas[node], millis) : own;
		}
		return RoundCommand.perNode(byNode);
	}

}
