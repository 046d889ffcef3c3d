package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.LockScripts.Script;
import dev.redlock.core.RedlockListener.NodeCommand;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;

/**
 * The nodes of a {@link Redlock} and what is done on all of them: their connection pools
 * and restart quarantines, the rounds that run a command or a lock script on every node
 * at once, the quorum that decides them, and the clean-up of values that a round could
 * not remove in time. Extension and release of a lease are counted here.
 */
final class NodeGroup implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(NodeGroup.class);

	private final List<RedisNodeUri> nodes;

	private final List<NodeConnectionPool> pools;

	private final List<NodeQuarantine> quarantines;

	private final Fanout fanout;

	private final ValueCleanup cleanup;

	private final LockEvents events;

	private final RedlockSettings settings;

	private final LongSupplier ticker;

	private final Quorum quorum;

	/** How an extension's reply counts: confirmed by a node out of quarantine. */
	private final Quorum.Vote countingConfirmation = this::countingConfirmation;

	private final WarmUp warmUp;

	private final CounterReseed reseed;

	/** Reads the nodes now and then with the restart quarantine on; {@code null} off. */
	private final @Nullable NodeProbe probe;

	NodeGroup(List<RedisNodeUri> nodes, RedlockSettings settings, LongSupplier ticker, List<RedlockListener> listeners,
			TlsSettings tls, RenewalScheduler scheduler) {
		this.nodes = List.copyOf(nodes);
		this.events = new LockEvents(listeners, this.nodes);
		this.settings = settings;
		this.ticker = ticker;
		this.quorum = new Quorum(nodes.size());
		List<NodeConnectionPool> pools = new ArrayList<>(nodes.size());
		List<NodeQuarantine> quarantines = new ArrayList<>(nodes.size());
		this.warmUp = (Math.min(settings.poolMinIdle(), settings.poolMaxIdle()) > 0) ? new WarmUp(this.quorum)
				: WarmUp.none();
		for (RedisNodeUri node : nodes) {
			NodeQuarantine quarantine = new NodeQuarantine(node, settings.restartQuarantine());
			quarantines.add(quarantine);
			pools.add(new NodeConnectionPool(node, settings, reconnectBackoff(settings).toNanos(),
					new QuarantineGreeting(quarantine), tls, this.warmUp));
		}
		this.pools = List.copyOf(pools);
		this.quarantines = List.copyOf(quarantines);
		this.reseed = new CounterReseed(this.pools, this.quorum, (int) Math.min(Integer.MAX_VALUE,
				Math.max(WarmUp.CONNECT_TIMEOUT_MILLIS, settings.nodeTimeout().toMillis())));
		for (int i = 0; i < this.quarantines.size(); i++) {
			int node = i;
			this.quarantines.get(i).markers().reseedWith((marker) -> this.reseed.request(node, marker));
		}
		if (!settings.restartQuarantine().isZero()) {
			QuarantineNotice notice = new QuarantineNotice(this.quarantines, this.quorum, settings.restartQuarantine(),
					"Redlock" + nodes.stream().map(RedisNodeUri::redacted).toList());
			for (int i = 0; i < this.quarantines.size(); i++) {
				int node = i;
				this.quarantines.get(i).onQuarantined((quarantine, reason, duration) -> {
					this.events.nodeQuarantined(node, reason, duration);
					notice.nodeQuarantined();
				});
			}
		}
		this.fanout = new Fanout(this.pools, settings.nodeTimeout().toNanos());
		this.cleanup = new ValueCleanup(new Fanout(this.pools, settings.nodeTimeout().toNanos(), true), this.pools,
				scheduler, settings.nodeTimeout().toNanos());
		this.probe = settings.restartQuarantine().isZero() ? null
				: new NodeProbe(this.quarantines, this.fanout, this.quorum, settings.clockTolerance().toNanos());
		if (this.probe != null) {
			for (NodeQuarantine quarantine : this.quarantines) {
				// a marker to write, or one found gone: the next probe writes it
				quarantine.markers().repairWith(() -> {
					this.probe.soon();
					quarantine.markers().repairEnded();
				});
			}
			this.probe.start();
		}
	}

	/**
	 * How long a node whose connection attempt failed is left alone: long enough that a
	 * dead node costs nothing, short enough that a restarted one is back within a few
	 * retries.
	 */
	static Duration reconnectBackoff(RedlockSettings settings) {
		Duration fourTimeouts = settings.nodeTimeout().multipliedBy(4);
		Duration floor = Duration.ofMillis(250);
		return (fourTimeouts.compareTo(floor) > 0) ? fourTimeouts : floor;
	}

	/**
	 * Starts opening the connections kept even when idle, on each node's connector
	 * thread.
	 */
	void warmUp() {
		this.pools.forEach(NodeConnectionPool::warmUp);
	}

	/**
	 * Waits, if the first connections are still being opened, until a quorum of nodes has
	 * one (at most {@link WarmUp#CONNECT_TIMEOUT_MILLIS}); returns at once after that.
	 */
	void awaitWarmUp() {
		this.warmUp.await();
	}

	/** The nodes, in configuration order. */
	List<RedisNodeUri> nodes() {
		return this.nodes;
	}

	/** The connection pools, one per node in configuration order. */
	List<NodeConnectionPool> pools() {
		return this.pools;
	}

	/** Re-seeds the fencing counters of nodes that forgot them. */
	CounterReseed reseed() {
		return this.reseed;
	}

	/** How many nodes must agree. */
	Quorum quorum() {
		return this.quorum;
	}

	/** The rounds on every node at once. */
	Fanout fanout() {
		return this.fanout;
	}

	/** The listeners and per-node counters. */
	LockEvents events() {
		return this.events;
	}

	/** The clean-up of values that rounds could not remove in time. */
	ValueCleanup cleanup() {
		return this.cleanup;
	}

	/** Every node's restart quarantine, in node order. */
	List<NodeQuarantine> quarantines() {
		return this.quarantines;
	}

	/** A node's restart quarantine. */
	NodeQuarantine quarantine(int node) {
		return this.quarantines.get(node);
	}

	/** Whether a node counts towards a quorum now: it is not in restart quarantine. */
	boolean counts(int node) {
		return this.quarantines.get(node).counts();
	}

	/** A confirmation by a node that counts towards a quorum now. */
	private byte countingConfirmation(NodeReply reply) {
		return (reply.isConfirmed() && counts(reply.node())) ? Quorum.Vote.AGREES : Quorum.Vote.REFUSES;
	}

	/**
	 * How many replies confirm a script's call on a node that counts towards a quorum
	 * now.
	 * @param replies the replies, {@code null} for nodes not asked
	 */
	int countingConfirmations(NodeReply[] replies) {
		return this.quorum.agreeing(replies, this.countingConfirmation);
	}

	/**
	 * Extends a lease on the nodes.
	 * @return whether it counts, and the validity deadline it gives; when it does not
	 * count, the deadline is still an upper bound: nodes may have taken the new TTL
	 */
	Extension extend(ExtensionRequest request) {
		NodeReply[] replies = runScript(NodeCommand.EXTEND, LockScripts.EXTEND, request.held().key(), null,
				new QuorumExit(NodeCommand.EXTEND, true, null), request.held().value(), request.ttlArgument());
		return judge(request, countingConfirmations(replies), this.ticker.getAsLong());
	}

	/**
	 * Judges an extension that so many counting nodes confirmed: it counts if they are a
	 * quorum and it came back within both the validity it extends and the one it gives.
	 * @param end ticker reading after the last reply that was waited for
	 */
	Extension judge(ExtensionRequest request, int confirmed, long end) {
		long ttlNanos = request.ttl().toNanos();
		long newValidUntil = request.start() + ttlNanos - this.settings.driftNanosFor(ttlNanos);
		boolean inTime = request.currentValidUntil() - end > 0 && newValidUntil - end > 0;
		boolean counted = this.quorum.reached(confirmed) && inTime;
		if (!counted) {
			logger.debug("Extension of '{}' does not count: confirmed by {} of {} nodes, in time: {}",
					request.held().key(), confirmed, this.pools.size(), inTime);
		}
		return new Extension(counted, newValidUntil);
	}

	/** This group's ticker reading now. */
	long now() {
		return this.ticker.getAsLong();
	}

	/**
	 * The result of an extension.
	 *
	 * @param counted whether a quorum confirmed it within the validity
	 * @param validUntil {@code start + ttl - drift} of the extension
	 */
	record Extension(boolean counted, long validUntil) {
	}

	/**
	 * Releases a lease on every node: deletes its key, or, when it must stay taken a
	 * while longer, cuts its TTL to that time.
	 * @param keepNanos how much longer the lock must stay taken; zero or less to delete
	 * it now
	 * @return the outcome, and each node's reply (the nodes not awaited included)
	 */
	Released release(HeldValue held, long longestTtlNanos, long keepNanos) {
		// PEXPIRE takes whole milliseconds: round up, so the lock is never kept for less
		// than asked
		long keepMillis = (keepNanos <= 0) ? 0 : Math.max(1, (keepNanos + 999_999) / 1_000_000);
		RawArgument key = held.key();
		RawArgument value = held.value();
		ValueToRemove ours = toRemove(held, longestTtlNanos, keepMillis);
		QuorumExit exit = new QuorumExit(NodeCommand.RELEASE, false, ours);
		NodeReply[] replies = (keepMillis == 0)
				? runScript(NodeCommand.RELEASE, LockScripts.RELEASE, key, null, exit, value) : runScript(
						NodeCommand.RELEASE, LockScripts.EXTEND, key, null, exit, value, RawArgument.of(keepMillis));
		return settleRelease(held, ours, replies, keepMillis == 0);
	}

	/**
	 * What a release leaves to remove from the nodes it does not reach.
	 * @param keepMillis how much longer the lock must stay taken, 0 for not at all
	 */
	static ValueToRemove toRemove(HeldValue held, long longestTtlNanos, long keepMillis) {
		long now = System.nanoTime();
		// a node that missed a release keeping the lock loses the value once the minimum
		// hold has passed, not before
		return new ValueToRemove(held.key(), held.value(), now + longestTtlNanos,
				now + TimeUnit.MILLISECONDS.toNanos(keepMillis), held.answeredLate());
	}

	/**
	 * Settles a release from its nodes' replies: leaves the value to the late clean-up on
	 * the nodes it may be on and did not confirm, and tells what a quorum said.
	 * @param replies each node's reply to this release
	 * @param deleted whether the key was to be deleted now
	 */
	Released settleRelease(HeldValue held, ValueToRemove ours, NodeReply[] replies, boolean deleted) {
		for (NodeReply reply : replies) {
			boolean failed = !reply.written() || (reply.kind() != NodeReply.Kind.NOT_AWAITED && !reply.isDefinite());
			boolean read = reply.kind() == NodeReply.Kind.REPLIED;
			if (failed ? held.mayBeOn(reply.node()) : (read && ours.mayRemainAfter(reply))) {
				// not reached in time, or the SET not waited for may land after this
				// release: the value is removed from the node's late-reply thread, behind
				// the SET's reply (a reply not waited for is judged there, as it comes)
				removeLater(reply.node(), ours);
			}
		}
		int deletedOn = 0;
		int notOurs = 0;
		for (NodeReply reply : replies) {
			if (reply.isConfirmed()) {
				deletedOn++;
			}
			else if (reply.kind() == NodeReply.Kind.REPLIED) {
				notOurs++;
			}
		}
		if (this.quorum.reached(deletedOn)) {
			return new Released(ReleaseOutcome.RELEASED, replies, deleted);
		}
		ReleaseOutcome outcome = this.quorum.lost(notOurs) ? ReleaseOutcome.EXPIRED : ReleaseOutcome.UNKNOWN;
		return new Released(outcome, replies, deleted);
	}

	/**
	 * The result of a release.
	 *
	 * @param outcome what a quorum said
	 * @param replies each node's reply
	 * @param deleted whether the key was to be deleted now, not kept until a minimum hold
	 */
	record Released(ReleaseOutcome outcome, NodeReply[] replies, boolean deleted) {
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
		NodeReply[] replies = fanout.execute(
				RoundCommand.script(script, LockScripts.call(Command.EVALSHA, script.sha1(), key, args)), selected,
				exit);
		this.events.nodeReplies(command, replies, NodeReply::isConfirmed);
		return replies;
	}

	/**
	 * An early exit for a round of a confirming script: settled once a quorum of counting
	 * nodes confirmed, or can no longer.
	 */
	EarlyExit quorumExit(NodeCommand command) {
		return new QuorumExit(command, true, null);
	}

	/**
	 * Ends a release or extension round once its outcome is known: a quorum confirmed it
	 * (a script answered 1), or so many nodes said the key is not ours that no quorum
	 * can. The slower nodes' replies are read off the caller's thread; a release that did
	 * not reach one of them is retried there until the value's TTL has passed.
	 */
	final class QuorumExit implements EarlyExit, Quorum.Vote {

		private final NodeCommand command;

		/**
		 * Whether only nodes out of restart quarantine confirm (an extension must count
		 * on the quorum).
		 */
		private final boolean countingOnly;

		private final @Nullable ValueToRemove toRemove;

		QuorumExit(NodeCommand command, boolean countingOnly, @Nullable ValueToRemove toRemove) {
			this.command = command;
			this.countingOnly = countingOnly;
			this.toRemove = toRemove;
		}

		@Override
		public boolean settled(NodeReply[] replies) {
			return NodeGroup.this.quorum.settledBy(replies, this);
		}

		@Override
		public byte of(NodeReply reply) {
			if (!reply.isDefinite()) {
				return NOT_YET;
			}
			return (reply.isConfirmed() && (!this.countingOnly || NodeGroup.this.counts(reply.node()))) ? AGREES
					: REFUSES;
		}

		@Override
		public @Nullable CommandArguments toNotAwaited(NodeReply[] replies) {
			return null;
		}

		@Override
		public void lateReply(NodeReply reply, @Nullable NodeReply followUp) {
			NodeGroup.this.events.nodeReplies(this.command, new NodeReply[] { reply }, NodeReply::isConfirmed);
			if (this.toRemove != null && this.toRemove.mayRemainAfter(reply)) {
				removeLater(reply.node(), this.toRemove);
			}
		}

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
	void removeLater(int node, ValueToRemove value) {
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
	record ValueToRemove(RawArgument key, RawArgument value, long expiresAt, long notBefore, long answeredLate) {

		/**
		 * Whether the value may still be on the node, or land there, after the node's
		 * reply to its release: the reply did not say, or it found nothing to release
		 * while the acquisition's {@code SET}, not waited for, may have come behind it. A
		 * release the node confirmed leaves nothing: the {@code SET} came first.
		 */
		boolean mayRemainAfter(NodeReply release) {
			return !release.isDefinite()
					|| (!release.isConfirmed() && HeldValue.isSet(this.answeredLate, release.node()));
		}

	}

	@Override
	public void close() {
		if (this.probe != null) {
			this.probe.close();
		}
		// one node timeout for a reply the late-reply thread still reads, one for the
		// removal
		this.cleanup.finish(this.settings.nodeTimeout().toNanos() * 2);
		this.reseed.close();
		this.pools.forEach(NodeConnectionPool::close);
	}

}
