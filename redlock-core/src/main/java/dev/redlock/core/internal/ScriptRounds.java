package dev.redlock.core.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.RedlockListener.NodeCommand;
import dev.redlock.core.RedlockSettings;
import dev.redlock.core.ReleaseOutcome;
import dev.redlock.core.internal.protocol.LockScripts;
import dev.redlock.core.internal.protocol.LockScripts.Script;
import dev.redlock.core.internal.protocol.RawArgument;
import dev.redlock.core.internal.round.BatchParts;
import dev.redlock.core.internal.round.BatchReplies;
import dev.redlock.core.internal.round.EarlyExit;
import dev.redlock.core.internal.round.Fanout;
import dev.redlock.core.internal.round.NodeReply;
import dev.redlock.core.internal.round.Quorum;
import dev.redlock.core.internal.round.RoundCommand;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;

/**
 * The rounds that run a lock script on every node at once, and how the quorum settles
 * them: a lease's extension and release, one alone or many in one write (a batch), a
 * fenced lock's token confirmation, and the removal of our values left behind. A batch
 * settles each of its calls by the same code as a call sent alone, by the nodes that
 * answered that call. A round returns once its outcome is known; the slower nodes'
 * replies are read off the caller's thread, and a release that did not reach one of them
 * is retried there until the value's TTL has passed.
 */
public final class ScriptRounds {

	private static final Logger logger = LoggerFactory.getLogger(ScriptRounds.class);

	private final NodeGroup group;

	private final Quorum quorum;

	private final Fanout fanout;

	private final LockEvents events;

	private final ValueCleanup cleanup;

	private final RedlockSettings settings;

	private final LongSupplier ticker;

	public ScriptRounds(NodeGroup group, RedlockSettings settings, LongSupplier ticker) {
		this.group = group;
		this.quorum = group.quorum();
		this.fanout = group.fanout();
		this.events = group.events();
		this.cleanup = group.cleanup();
		this.settings = settings;
		this.ticker = ticker;
	}

	/**
	 * Runs a lock script by its digest, and by its source on the nodes that do not have
	 * it cached.
	 * @param exit when to stop waiting for the slower nodes; {@code null} to wait for all
	 */
	NodeReply[] runScript(NodeCommand command, Script script, RawArgument key, boolean @Nullable [] selected,
			@Nullable EarlyExit exit, RawArgument... args) {
		return runScript(this.fanout, command, script, key, selected, exit, args);
	}

	/**
	 * {@link #runScript(NodeCommand, Script, RawArgument, boolean[], EarlyExit, RawArgument...)}
	 * within a deadline: each round is cut at it, and what there is no time for shows as
	 * timed out (a round that cannot start: {@code null}).
	 * @param deadline a {@link System#nanoTime()} reading
	 * @return the replies, or {@code null} when the deadline has passed
	 */
	NodeReply @Nullable [] runScript(long deadline, NodeCommand command, Script script, RawArgument key,
			boolean @Nullable [] selected, @Nullable EarlyExit exit, RawArgument... args) {
		Fanout bounded = this.fanout.until(deadline);
		return (bounded != null) ? runScript(bounded, command, script, key, selected, exit, args) : null;
	}

	private NodeReply[] runScript(Fanout fanout, NodeCommand command, Script script, RawArgument key,
			boolean @Nullable [] selected, @Nullable EarlyExit exit, RawArgument... args) {
		RoundCommand call = RoundCommand.of(LockScripts.call(Command.EVALSHA, script.sha1(), key, args));
		if (command == NodeCommand.EXTEND) {
			// an extension counts where it reached the replicas waited for
			call = this.group.replicaWaits().counted(call, fanout);
		}
		NodeReply[] replies = fanout.execute(call, selected, exit);
		this.events.nodeReplies(command, replies, NodeReply::isConfirmed);
		return replies;
	}

	/**
	 * An early exit for a round of a confirming script: settled once a quorum of counting
	 * nodes confirmed, or can no longer.
	 */
	EarlyExit quorumExit(NodeCommand command) {
		return new QuorumExit(command, Calls.ONE, true, null);
	}

	/**
	 * How many replies confirm a script's call on a node that counts towards a quorum
	 * now.
	 * @param replies the replies, {@code null} for nodes not asked
	 */
	int countingConfirmations(NodeReply[] replies) {
		return confirmations(replies, Calls.ONE, 0);
	}

	private int confirmations(NodeReply[] replies, Calls calls, int call) {
		int confirmed = 0;
		for (NodeReply reply : replies) {
			if (reply != null && calls.confirms(reply, call) && this.group.counts(reply.node())) {
				confirmed++;
			}
		}
		return confirmed;
	}

	/**
	 * Extends a lease on the nodes.
	 * @return whether it counts, and the validity deadline it gives; when it does not
	 * count, the deadline is still an upper bound: nodes may have taken the new TTL
	 */
	public Extension extend(ExtensionRequest request) {
		NodeReply[] replies = runScript(NodeCommand.EXTEND, LockScripts.EXTEND, request.held().key(),
				this.group.select(request.held().key()), new QuorumExit(NodeCommand.EXTEND, Calls.ONE, true, null),
				request.held().value(), request.ttlArgument());
		return judge(request, replies, Calls.ONE, 0, this.ticker.getAsLong());
	}

	/**
	 * Extends leases in one round (two on the nodes that lost their script cache): every
	 * lease's call goes to each node in one write and comes back as one list of replies,
	 * so the renewals due together cost the nodes one round trip, not one each. With
	 * voters of several nodes, one round per key range the leases' keys fall in
	 * ({@link BatchParts}).
	 * @param requests the extensions, at least one
	 * @param reports where to leave what the listeners are to be told, once the leases'
	 * state locks are left
	 * @return each extension's result, in the order of the requests
	 */
	public Extension[] extend(List<ExtensionRequest> requests, List<Runnable> reports) {
		if (!this.group.layout().sharded()) {
			return extend(requests, null, reports);
		}
		Extension[] extensions = new Extension[requests.size()];
		for (BatchParts part : BatchParts.of(this.group.layout(), requests, (request) -> request.held().key())) {
			Extension[] done = extend(part.of(requests), part.selection(), reports);
			for (int i = 0; i < done.length; i++) {
				extensions[part.indexes()[i]] = done[i];
			}
		}
		return extensions;
	}

	/** Extends leases whose keys the selected nodes serve, in one round. */
	private Extension[] extend(List<ExtensionRequest> requests, boolean @Nullable [] selected, List<Runnable> reports) {
		Calls calls = Calls.batch(requests.size());
		List<CommandArguments> batch = new ArrayList<>(requests.size());
		for (ExtensionRequest request : requests) {
			batch.add(LockScripts.call(Command.EVALSHA, LockScripts.EXTEND.sha1(), request.held().key(),
					request.held().value(), request.ttlArgument()));
		}
		NodeReply[] replies = this.fanout.execute(
				this.group.replicaWaits().counted(RoundCommand.batch(batch), this.fanout), selected,
				new QuorumExit(NodeCommand.EXTEND, calls, true, null));
		reports.add(() -> calls.report(this.events, NodeCommand.EXTEND, replies));
		long end = this.ticker.getAsLong();
		Extension[] extensions = new Extension[calls.count()];
		for (int call = 0; call < extensions.length; call++) {
			extensions[call] = judge(requests.get(call), replies, calls, call, end);
		}
		return extensions;
	}

	/**
	 * Judges an extension: it counts if a quorum of counting nodes confirmed it and it
	 * came back within both the validity it extends and the one it gives.
	 * @param end ticker reading after the last reply that was waited for
	 */
	private Extension judge(ExtensionRequest request, NodeReply[] replies, Calls calls, int call, long end) {
		int confirmed = confirmations(replies, calls, call);
		long ttlNanos = request.ttl().toNanos();
		long newValidUntil = request.start() + ttlNanos - this.settings.driftNanosFor(ttlNanos);
		boolean inTime = request.currentValidUntil() - end > 0 && newValidUntil - end > 0;
		boolean counted = this.quorum.reached(confirmed) && inTime;
		if (!counted && logger.isDebugEnabled()) {
			int taken = 0;
			for (NodeReply reply : replies) {
				NodeReply answer = (reply != null) ? calls.answer(reply, call) : null;
				taken += (answer != null && answer.kind() == NodeReply.Kind.REPLIED
						&& answer.value() instanceof Long held && held < 0) ? 1 : 0;
			}
			logger.debug(
					"Extension of '{}' does not count: confirmed by {} of {} nodes (taken by another value on {}, "
							+ "the others expired or not reached), in time: {}",
					request.held().key(), confirmed, replies.length, taken, inTime);
		}
		return new Extension(counted, newValidUntil);
	}

	/**
	 * The result of an extension.
	 *
	 * @param counted whether a quorum confirmed it within the validity
	 * @param validUntil {@code start + ttl - drift} of the extension
	 */
	public record Extension(boolean counted, long validUntil) {
	}

	/**
	 * Releases a lease on every node: deletes its key, or, when it must stay taken a
	 * while longer, cuts its TTL to that time.
	 * @param keepNanos how much longer the lock must stay taken; zero or less to delete
	 * it now
	 * @return the outcome, and each node's reply (the nodes not awaited included)
	 */
	public Released release(HeldValue held, long longestTtlNanos, long keepNanos) {
		// PEXPIRE takes whole milliseconds: round up, so the lock is never kept for less
		// than asked
		long keepMillis = (keepNanos <= 0) ? 0 : Math.max(1, (keepNanos + 999_999) / 1_000_000);
		RawArgument key = held.key();
		RawArgument value = held.value();
		ValueToRemove ours = toRemove(held, longestTtlNanos, keepMillis);
		QuorumExit exit = new QuorumExit(NodeCommand.RELEASE, Calls.ONE, false, ours);
		boolean @Nullable [] voters = this.group.select(key);
		NodeReply[] replies = (keepMillis == 0)
				? runScript(NodeCommand.RELEASE, LockScripts.RELEASE, key, voters, exit, value) : runScript(
						NodeCommand.RELEASE, LockScripts.EXTEND, key, voters, exit, value, RawArgument.of(keepMillis));
		return settleRelease(held, ours, replies, Calls.ONE, 0, keepMillis == 0);
	}

	/**
	 * Releases leases in one round (two on the nodes that lost their script cache): every
	 * lease's call goes to each node in one write and comes back as one list of replies
	 * (with voters of several nodes, one round per key range the keys fall in). For the
	 * listeners, a batch is one request per node, successful when the node deleted every
	 * value in it.
	 * @param held the leases' values, at least one
	 * @param longestTtlNanos each lease's longest TTL, in the same order
	 * @return each release's result, in the same order
	 */
	public Released[] release(List<HeldValue> held, long[] longestTtlNanos) {
		if (!this.group.layout().sharded()) {
			return release(held, longestTtlNanos, null);
		}
		Released[] released = new Released[held.size()];
		for (BatchParts part : BatchParts.of(this.group.layout(), held, HeldValue::key)) {
			long[] ttls = new long[part.indexes().length];
			for (int i = 0; i < ttls.length; i++) {
				ttls[i] = longestTtlNanos[part.indexes()[i]];
			}
			Released[] done = release(part.of(held), ttls, part.selection());
			for (int i = 0; i < done.length; i++) {
				released[part.indexes()[i]] = done[i];
			}
		}
		return released;
	}

	/** Releases leases whose keys the selected nodes serve, in one round. */
	private Released[] release(List<HeldValue> held, long[] longestTtlNanos, boolean @Nullable [] selected) {
		Calls calls = Calls.batch(held.size());
		ValueToRemove[] values = new ValueToRemove[calls.count()];
		List<CommandArguments> batch = new ArrayList<>(values.length);
		for (int call = 0; call < values.length; call++) {
			HeldValue value = held.get(call);
			values[call] = toRemove(value, longestTtlNanos[call], 0);
			batch.add(LockScripts.call(Command.EVALSHA, LockScripts.RELEASE.sha1(), value.key(), value.value()));
		}
		NodeReply[] replies = this.fanout.execute(RoundCommand.batch(batch), selected,
				new QuorumExit(NodeCommand.RELEASE, calls, false, (call) -> values[call]));
		calls.report(this.events, NodeCommand.RELEASE, replies);
		Released[] released = new Released[values.length];
		for (int call = 0; call < values.length; call++) {
			released[call] = settleRelease(held.get(call), values[call], replies, calls, call, true);
		}
		return released;
	}

	/**
	 * What a release leaves to remove from the nodes it does not reach.
	 * @param keepMillis how much longer the lock must stay taken, 0 for not at all
	 */
	private static ValueToRemove toRemove(HeldValue held, long longestTtlNanos, long keepMillis) {
		long now = System.nanoTime();
		// a node that missed a release keeping the lock loses the value once the minimum
		// hold has passed, not before
		return new ValueToRemove(held.key(), held.value(), now + longestTtlNanos,
				now + TimeUnit.MILLISECONDS.toNanos(keepMillis), held.answeredLate());
	}

	/**
	 * Settles one release from its nodes' replies: leaves the value to the late clean-up
	 * on the nodes it may be on and did not confirm, and tells what a quorum said.
	 * @param replies each node's reply to the round
	 * @param call the release's call in the round
	 * @param deleted whether the key was to be deleted now
	 */
	private Released settleRelease(HeldValue held, ValueToRemove ours, NodeReply[] replies, Calls calls, int call,
			boolean deleted) {
		int deletedOn = 0;
		int notOurs = 0;
		NodeReply[] answers = calls.isBatch() ? new NodeReply[replies.length] : replies;
		for (int i = 0; i < replies.length; i++) {
			if (replies[i] == null) {
				// not asked: another shard of its voter serves the key
				continue;
			}
			NodeReply reply = calls.answer(replies[i], call);
			answers[i] = reply;
			if (reply.redirection() != null) {
				// a cluster node that redirected: nothing ran, and the key is elsewhere
				continue;
			}
			boolean failed = !reply.written() || (reply.kind() != NodeReply.Kind.NOT_AWAITED && !reply.isDefinite());
			boolean read = reply.kind() == NodeReply.Kind.REPLIED;
			if (failed ? held.mayBeOn(reply.node()) : (read && ours.mayRemainAfter(reply))) {
				// not reached in time, or the SET not waited for may land after this
				// release: the value is removed from the node's late-reply thread, behind
				// the SET's reply (a reply not waited for is judged there, as it comes)
				removeLater(reply.node(), ours);
			}
			if (reply.isConfirmed()) {
				deletedOn++;
			}
			else if (read) {
				notOurs++;
			}
		}
		if (this.quorum.reached(deletedOn)) {
			return new Released(ReleaseOutcome.RELEASED, answers, deleted);
		}
		ReleaseOutcome outcome = this.quorum.lost(notOurs) ? ReleaseOutcome.EXPIRED : ReleaseOutcome.UNKNOWN;
		return new Released(outcome, answers, deleted);
	}

	/**
	 * The result of a release.
	 *
	 * @param outcome what a quorum said
	 * @param replies each node's reply
	 * @param deleted whether the key was to be deleted now, not kept until a minimum hold
	 */
	public record Released(ReleaseOutcome outcome, NodeReply[] replies, boolean deleted) {
	}

	/**
	 * Removes, on the caller's thread, values of ours for this key that still wait for
	 * the late clean-up on so many nodes that they would deny a quorum: left by a release
	 * or a lost round of this instance that could not be confirmed, they would refuse its
	 * own next acquisition of the key. Costs nothing when none waits (the usual case),
	 * and never runs past the deadline when some do; values waiting only on a minority (a
	 * node down or frozen), or for which there is no time left, are left to the late
	 * clean-up.
	 * @param deadline a {@link System#nanoTime()} reading
	 */
	void removeOwnLeftovers(RawArgument key, long deadline) {
		Map<RawArgument, boolean[]> waiting = this.cleanup.waitingFor(key);
		if (waiting.isEmpty()) {
			return;
		}
		waiting.forEach((value, nodes) -> {
			int count = 0;
			for (boolean on : nodes) {
				count += on ? 1 : 0;
			}
			// what there is no time for stays with the late clean-up
			NodeReply[] replies = this.quorum.lost(count)
					? runScript(deadline, NodeCommand.RELEASE, LockScripts.DISCARD, key, nodes, null, value) : null;
			if (replies != null) {
				for (int i = 0; i < nodes.length; i++) {
					if (nodes[i] && replies[i] != null && replies[i].isDefinite()) {
						this.cleanup.removed(i, key, value);
					}
				}
			}
		});
	}

	/** Leaves a value to the node's late clean-up, until it expires by itself. */
	private void removeLater(int node, ValueToRemove value) {
		this.cleanup.remove(node, value.key(), value.value(), value.expiresAt(), value.notBefore());
	}

	/**
	 * A lock value to remove from the nodes a release did not reach, until it expires by
	 * itself.
	 *
	 * @param expiresAt {@link System#nanoTime()} by which it has expired anyway
	 * @param notBefore {@link System#nanoTime()} before which it must stay: the end of a
	 * minimum hold
	 * @param answeredLate the nodes whose acquisition reply was left to their late-reply
	 * thread, as in {@link HeldValue}: there the {@code SET} may land after the release
	 */
	public record ValueToRemove(RawArgument key, RawArgument value, long expiresAt, long notBefore,
			long answeredLate) implements Removals {

		/** A lone release removes one value, whatever the call. */
		@Override
		public ValueToRemove ofCall(int call) {
			return this;
		}

		/**
		 * Whether the value may still be on the node, or land there, after the node's
		 * reply to its release: the reply did not say, or it found nothing to release
		 * while the acquisition's {@code SET}, not waited for, may have come behind it. A
		 * release the node confirmed leaves nothing: the {@code SET} came first.
		 */
		public boolean mayRemainAfter(NodeReply release) {
			return !release.isDefinite()
					|| (!release.isConfirmed() && HeldValue.isSet(this.answeredLate, release.node()));
		}

	}

	/**
	 * What a release round leaves to the late clean-up on the nodes it did not reach: one
	 * value per call (a lone release's value is its own {@code Removals}, so that it
	 * allocates nothing more).
	 */
	private interface Removals {

		ValueToRemove ofCall(int call);

	}

	/**
	 * The calls of a round: one sent alone, or a batch whose replies read as one list per
	 * node ({@link BatchReplies}). Each call is settled by its own answers.
	 *
	 * @param count how many calls
	 * @param isBatch whether they were sent as a batch
	 */
	private record Calls(int count, boolean isBatch) {

		static final Calls ONE = new Calls(1, false);

		static Calls batch(int count) {
			return new Calls(count, true);
		}

		/**
		 * A node's answer to one call, as the node would have answered that call alone.
		 */
		NodeReply answer(NodeReply reply, int call) {
			return this.isBatch ? BatchReplies.part(reply, call, this.count) : reply;
		}

		/** Whether a node's reply confirms one call: the script answered 1 for it. */
		boolean confirms(NodeReply reply, int call) {
			return this.isBatch ? BatchReplies.confirms(reply, call, this.count) : reply.isConfirmed();
		}

		/** Tells the listeners of the nodes' replies: a batch is one request per node. */
		void report(LockEvents events, NodeCommand command, NodeReply[] replies) {
			if (this.isBatch) {
				events.nodeReplies(command, BatchReplies.asEvents(replies), confirmsAll());
			}
			else {
				events.nodeReplies(command, replies, NodeReply::isConfirmed);
			}
		}

		private Predicate<NodeReply> confirmsAll() {
			return (reply) -> {
				for (int call = 0; call < this.count; call++) {
					if (!confirms(reply, call)) {
						return false;
					}
				}
				return true;
			};
		}

	}

	/**
	 * Ends a round of a confirming script once its outcome is known: for every call, a
	 * quorum confirmed it (the script answered 1), or so many nodes did not that no
	 * quorum can. A node that lost the script has not answered yet: it is asked again.
	 * The slower nodes' replies are read off the caller's thread; a release that did not
	 * reach one of them is retried there until the value's TTL has passed.
	 */
	private final class QuorumExit implements EarlyExit {

		private final NodeCommand command;

		private final Calls calls;

		/**
		 * Whether only nodes out of restart quarantine confirm (an extension must count
		 * on the quorum; any node's delete counts).
		 */
		private final boolean countingOnly;

		/** What a release leaves to the late clean-up, {@code null} for none. */
		private final @Nullable Removals removals;

		QuorumExit(NodeCommand command, Calls calls, boolean countingOnly, @Nullable Removals removals) {
			this.command = command;
			this.calls = calls;
			this.countingOnly = countingOnly;
			this.removals = removals;
		}

		@Override
		public boolean settled(NodeReply[] replies) {
			for (int call = 0; call < this.calls.count(); call++) {
				int confirmed = 0;
				int refused = 0;
				for (NodeReply reply : replies) {
					if (reply != null && reply.isDefinite() && !RoundCommand.lacksScript(reply)) {
						if (this.calls.confirms(reply, call)
								&& (!this.countingOnly || ScriptRounds.this.group.counts(reply.node()))) {
							confirmed++;
						}
						else {
							refused++;
						}
					}
				}
				if (!ScriptRounds.this.quorum.settled(confirmed, refused)) {
					return false;
				}
			}
			return true;
		}

		@Override
		public void lateReply(NodeReply reply, @Nullable NodeReply followUp) {
			this.calls.report(ScriptRounds.this.events, this.command, new NodeReply[] { reply });
			if (this.removals == null) {
				return;
			}
			for (int call = 0; call < this.calls.count(); call++) {
				ValueToRemove value = this.removals.ofCall(call);
				if (value.mayRemainAfter(this.calls.answer(reply, call))) {
					removeLater(reply.node(), value);
				}
			}
		}

	}

}
