package dev.redlock.core;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.RedlockListener.NodeCommand;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisNoScriptException;

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
		NodeReply[] replies = this.group.fanout()
			.execute(calls(requests, Command.EVALSHA, LockScripts.EXTEND.sha1()), null, new BatchExit(parts));
		boolean[] missing = ScriptRetry.nodesLackingScript(replies, BatchExtension::lacksScript);
		if (missing != null) {
			ScriptRetry.merge(replies, this.group.fanout()
				.execute(calls(requests, Command.EVAL, LockScripts.EXTEND.source()), missing, null), missing);
		}
		reports.add(() -> this.group.events().nodeReplies(NodeCommand.EXTEND, asEvents(replies), confirmsAll(parts)));
		long end = this.group.now();
		NodeGroup.Extension[] extensions = new NodeGroup.Extension[parts];
		for (int part = 0; part < parts; part++) {
			int confirmed = 0;
			for (NodeReply reply : replies) {
				if (confirms(reply, part, parts) && this.group.counts(reply.node())) {
					confirmed++;
				}
			}
			extensions[part] = this.group.judge(requests.get(part), confirmed, end);
		}
		return extensions;
	}

	/**
	 * Whether the node answered {@code NOSCRIPT}: it lost its script cache (a flush), so
	 * every call of the batch is retried there by the script's source.
	 */
	private static boolean lacksScript(NodeReply reply) {
		if (reply.kind() != NodeReply.Kind.REPLIED || !(reply.value() instanceof List<?> answers)) {
			return reply.isNoScript();
		}
		for (Object answer : answers) {
			if (answer instanceof JedisNoScriptException) {
				return true;
			}
		}
		return false;
	}

	/**
	 * The replies as the listeners hear of them: a node that answered with an error
	 * reply, to any call, failed the request (as a single extension answered so fails).
	 */
	private static NodeReply[] asEvents(NodeReply[] replies) {
		NodeReply[] events = replies.clone();
		for (int i = 0; i < events.length; i++) {
			JedisDataException error = errorIn(events[i]);
			if (error != null) {
				events[i] = NodeReply.failed(events[i].node(), error, events[i].nanos());
			}
		}
		return events;
	}

	private static @Nullable JedisDataException errorIn(@Nullable NodeReply reply) {
		if (reply != null && reply.kind() == NodeReply.Kind.REPLIED && reply.value() instanceof List<?> answers) {
			for (Object answer : answers) {
				if (answer instanceof JedisDataException error) {
					return error;
				}
			}
		}
		return null;
	}

	private static RoundCommand calls(List<ExtensionRequest> requests, Command command, RawArgument script) {
		List<CommandArguments> calls = new ArrayList<>(requests.size());
		for (ExtensionRequest request : requests) {
			calls.add(LockScripts.call(command, script, request.held().key(), request.held().value(),
					request.ttlArgument()));
		}
		return RoundCommand.batch(calls);
	}

	/**
	 * Whether a node's reply confirms one call of the batch: the script answered 1 for
	 * it. A reply that is not a list of one answer per call confirms none.
	 */
	private static boolean confirms(@Nullable NodeReply reply, int part, int parts) {
		return reply != null && reply.kind() == NodeReply.Kind.REPLIED && reply.value() instanceof List<?> answers
				&& answers.size() == parts && answers.get(part) instanceof Long count && count > 0;
	}

	private static Predicate<NodeReply> confirmsAll(int parts) {
		return (reply) -> {
			for (int part = 0; part < parts; part++) {
				if (!confirms(reply, part, parts)) {
					return false;
				}
			}
			return true;
		};
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
			int quorum = BatchExtension.this.group.quorum();
			boolean[] answered = answered(replies);
			for (int part = 0; part < this.parts; part++) {
				int confirmed = 0;
				int refused = 0;
				for (int i = 0; i < replies.length; i++) {
					NodeReply reply = replies[i];
					if (answered[i]) {
						if (confirms(reply, part, this.parts) && BatchExtension.this.group.counts(reply.node())) {
							confirmed++;
						}
						else {
							refused++;
						}
					}
				}
				if (confirmed < quorum && refused <= replies.length - quorum) {
					return false;
				}
			}
			return true;
		}

		/**
		 * The nodes whose answer is known, looked at once per reply rather than once per
		 * call: a node that lost its scripts is asked again, so its answer is still to
		 * come.
		 */
		private static boolean[] answered(NodeReply[] replies) {
			boolean[] answered = new boolean[replies.length];
			for (int i = 0; i < replies.length; i++) {
				answered[i] = replies[i] != null && replies[i].isDefinite() && !lacksScript(replies[i]);
			}
			return answered;
		}

		@Override
		public @Nullable CommandArguments toNotAwaited(NodeReply[] replies) {
			return null;
		}

		@Override
		public void lateReply(NodeReply reply, @Nullable NodeReply followUp) {
			BatchExtension.this.group.events()
				.nodeReplies(NodeCommand.EXTEND, asEvents(new NodeReply[] { reply }), confirmsAll(this.parts));
		}

	}

}
