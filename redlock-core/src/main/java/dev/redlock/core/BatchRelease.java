package dev.redlock.core;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.NodeGroup.Released;
import dev.redlock.core.NodeGroup.ValueToRemove;
import dev.redlock.core.RedlockListener.NodeCommand;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;

/**
 * Releases many leases in one round: every lease's release script call goes to each node
 * in one write and comes back as one list of replies. Each release is still settled on
 * its own, as a single release is ({@link NodeGroup#settleRelease}): by the nodes that
 * deleted its own value. For the listeners, a batch is one request per node, successful
 * when the node deleted every value in it. A batch holds at most
 * {@value ReleaseBatches#MAX_BATCH} calls, a few kilobytes.
 */
final class BatchRelease {

	private final NodeGroup group;

	BatchRelease(NodeGroup group) {
		this.group = group;
	}

	/**
	 * Releases one lease at once, in a round of its own.
	 */
	Released release(HeldValue held, long longestTtlNanos) {
		return this.group.release(held, longestTtlNanos, 0);
	}

	/**
	 * Releases the leases in one round (two on the nodes that lost their script cache).
	 * @param held the leases' values, at least one
	 * @param longestTtlNanos each lease's longest TTL, in the same order
	 * @return each release's result, in the same order
	 */
	Released[] release(List<HeldValue> held, long[] longestTtlNanos) {
		int parts = held.size();
		ValueToRemove[] values = new ValueToRemove[parts];
		for (int part = 0; part < parts; part++) {
			values[part] = NodeGroup.toRemove(held.get(part), longestTtlNanos[part], 0);
		}
		NodeReply[] replies = this.group.fanout().execute(calls(held), null, new BatchReleaseExit(values));
		this.group.events()
			.nodeReplies(NodeCommand.RELEASE, BatchReplies.asEvents(replies), BatchReplies.confirmsAll(parts));
		Released[] released = new Released[parts];
		for (int part = 0; part < parts; part++) {
			released[part] = this.group.settleRelease(held.get(part), values[part], partOf(replies, part, parts), true);
		}
		return released;
	}

	private static NodeReply[] partOf(NodeReply[] replies, int part, int parts) {
		NodeReply[] release = new NodeReply[replies.length];
		for (int i = 0; i < replies.length; i++) {
			release[i] = BatchReplies.part(replies[i], part, parts);
		}
		return release;
	}

	private static RoundCommand calls(List<HeldValue> held) {
		List<CommandArguments> calls = new ArrayList<>(held.size());
		for (HeldValue value : held) {
			calls.add(LockScripts.call(Command.EVALSHA, LockScripts.RELEASE.sha1(), value.key(), value.value()));
		}
		return RoundCommand.scriptBatch(LockScripts.RELEASE, calls);
	}

	/**
	 * Ends a batch round once every release's outcome is known: for each, a quorum
	 * deleted its value, or so many nodes did not that no quorum can. The slower nodes'
	 * replies are read by their late-reply threads, which leave each value a node did not
	 * confirm to the late clean-up.
	 */
	private final class BatchReleaseExit implements EarlyExit {

		private final ValueToRemove[] values;

		BatchReleaseExit(ValueToRemove[] values) {
			this.values = values;
		}

		@Override
		public boolean settled(NodeReply[] replies) {
			// any node's delete counts, in restart quarantine or not, as for one release
			return BatchReplies.settled(replies, this.values.length, BatchRelease.this.group.quorum(), (node) -> true);
		}

		@Override
		public @Nullable CommandArguments toNotAwaited(NodeReply[] replies) {
			return null;
		}

		@Override
		public void lateReply(NodeReply reply, @Nullable NodeReply followUp) {
			int parts = this.values.length;
			BatchRelease.this.group.events()
				.nodeReplies(NodeCommand.RELEASE, BatchReplies.asEvents(new NodeReply[] { reply }),
						BatchReplies.confirmsAll(parts));
			for (int part = 0; part < parts; part++) {
				if (this.values[part].mayRemainAfter(BatchReplies.part(reply, part, parts))) {
					BatchRelease.this.group.removeLater(reply.node(), this.values[part]);
				}
			}
		}

	}

}
