package dev.redlock.core;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.RedlockListener.NodeCommand;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;

/**
 * Extends many leases in one round: every lease's extension script call goes to each node
 * in one write and comes back as one list of replies, so the renewals due together cost
 * the nodes one round trip, not one each. Each lease is still judged on its own, as a
 * single extension is ({@link NodeGroup#judge}): by the counting nodes that confirmed its
 * own call, within its own validity. For the listeners, a batch is one request per node,
 * successful when the node confirmed every call in it. A batch holds at most
 * {@value RenewalBatches#MAX_BATCH} calls, tens of kilobytes: a node that stopped reading
 * cannot make its write wait, since the sockets' buffers take that much.
 */
final class BatchExtension {

	private final NodeGroup group;

	BatchExtension(NodeGroup group) {
		this.group = group;
	}

	/**
	 * Extends the leases, in one round (two on the nodes that lost their script cache).
	 * @param requests the extensions, at least one
	 * @param reports where to leave what the listeners are to be told, once the leases'
	 * state locks are left
	 * @return each extension's result, in the order of the requests
	 */
	NodeGroup.Extension[] extend(List<ExtensionRequest> requests, List<Runnable> reports) {
		int parts = requests.size();
		NodeReply[] replies = this.group.fanout().execute(calls(requests), null, new BatchExit(parts));
		reports.add(() -> this.group.events()
			.nodeReplies(NodeCommand.EXTEND, BatchReplies.asEvents(replies), BatchReplies.confirmsAll(parts)));
		long end = this.group.now();
		NodeGroup.Extension[] extensions = new NodeGroup.Extension[parts];
		for (int part = 0; part < parts; part++) {
			int confirmed = 0;
			for (NodeReply reply : replies) {
				if (BatchReplies.confirms(reply, part, parts) && this.group.counts(reply.node())) {
					confirmed++;
				}
			}
			extensions[part] = this.group.judge(requests.get(part), confirmed, end);
		}
		return extensions;
	}

	private static RoundCommand calls(List<ExtensionRequest> requests) {
		List<CommandArguments> calls = new ArrayList<>(requests.size());
		for (ExtensionRequest request : requests) {
			calls.add(LockScripts.call(Command.EVALSHA, LockScripts.EXTEND.sha1(), request.held().key(),
					request.held().value(), request.ttlArgument()));
		}
		return RoundCommand.scriptBatch(LockScripts.EXTEND, calls);
	}

	/**
	 * Ends a batch round once every lease's outcome is known: for each, a quorum of
	 * counting nodes confirmed it, or so many nodes did not that no quorum can. The
	 * slower nodes' replies are read off the renewal thread.
	 */
	private final class BatchExit implements EarlyExit {

		private final int parts;

		BatchExit(int parts) {
			this.parts = parts;
		}

		@Override
		public boolean settled(NodeReply[] replies) {
			NodeGroup group = BatchExtension.this.group;
			return BatchReplies.settled(replies, this.parts, group.quorum(), group::counts);
		}

		@Override
		public @Nullable CommandArguments toNotAwaited(NodeReply[] replies) {
			return null;
		}

		@Override
		public void lateReply(NodeReply reply, @Nullable NodeReply followUp) {
			BatchExtension.this.group.events()
				.nodeReplies(NodeCommand.EXTEND, BatchReplies.asEvents(new NodeReply[] { reply }),
						BatchReplies.confirmsAll(this.parts));
		}

	}

}
