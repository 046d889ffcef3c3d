package dev.redlock.core.internal;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.RedlockListener.NodeCommand;
import dev.redlock.core.RedlockSettings;
import dev.redlock.core.internal.protocol.AcquireReply;
import dev.redlock.core.internal.protocol.KeyLayout;
import dev.redlock.core.internal.protocol.LockScripts;
import dev.redlock.core.internal.protocol.LockScripts.Script;
import dev.redlock.core.internal.protocol.RawArgument;
import dev.redlock.core.internal.quarantine.NodeJudge;
import dev.redlock.core.internal.quarantine.NodeMarker;
import dev.redlock.core.internal.round.EarlyExit;
import dev.redlock.core.internal.round.Fanout;
import dev.redlock.core.internal.round.NodeReply;
import dev.redlock.core.internal.round.Quorum;
import dev.redlock.core.internal.round.RoundCommand;
import dev.redlock.core.internal.round.VoterLayout;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.Protocol.Keyword;

/**
 * One acquisition attempt of the Redlock algorithm: a random value written with
 * {@code SET key value NX PX ttl} (for a fenced lock, by a script that also raises the
 * resource's counter where it sets the key) to every node at once, the round ended as
 * soon as its outcome is known, and the lock won if a quorum granted it with validity
 * left: {@code ttl - elapsed - drift > 0}. A fenced attempt whose grants counted
 * differently confirms its token on a quorum in a second round. A lost attempt removes
 * its value from every node where it may have landed.
 */
public final class AcquireRound {

	private static final Logger logger = LoggerFactory.getLogger(AcquireRound.class);

	private static final Predicate<NodeReply> GRANTS = (reply) -> AcquireAttempt.isGrant(reply, false);

	/** Read once written: never changed, so shared by every round. */
	private static final CommandArguments READ_TIME = new CommandArguments(Command.TIME);

	private static final CommandArguments READ_MARKER = new CommandArguments(Command.GET).add(NodeMarker.KEY);

	private static final Predicate<NodeReply> FENCED_GRANTS = (reply) -> AcquireAttempt.isGrant(reply, true);

	private final NodeGroup group;

	private final ScriptRounds rounds;

	private final RedlockSettings settings;

	private final LongSupplier ticker;

	private volatile @Nullable TtlArgument lastTtl;

	/**
	 * Whether rounds read the nodes' clocks and markers (the restart quarantine is on):
	 * only then does a plain {@code SET} not do.
	 */
	private final boolean judged;

	/**
	 * Each node's marker key, when every node keeps its marker in a slot of its own (some
	 * voter has several nodes); {@code null} when every node's is {@code {fence}}.
	 */
	private final RawArgument @Nullable [] ownMarkers;

	/**
	 * The read of each node's own marker, by node, written behind its {@code SET}; with
	 * {@link #ownMarkers} only.
	 */
	private final CommandArguments @Nullable [] readOwnMarkers;

	/**
	 * Whether fenced acquisitions confirm their token on a quorum (the second round); off
	 * only in the test that shows why it is needed.
	 */
	private volatile boolean confirmTokens = true;

	public AcquireRound(NodeGroup group, ScriptRounds rounds, RedlockSettings settings, LongSupplier ticker) {
		this.group = group;
		this.rounds = rounds;
		this.settings = settings;
		this.ticker = ticker;
		this.judged = !settings.restartQuarantine().isZero();
		VoterLayout layout = group.layout();
		if (layout.keys() == KeyLayout.TAGGED) {
			this.ownMarkers = new RawArgument[layout.nodes()];
			this.readOwnMarkers = new CommandArguments[layout.nodes()];
			for (int node = 0; node < layout.nodes(); node++) {
				this.ownMarkers[node] = RawArgument.of(layout.markerKey(node));
				this.readOwnMarkers[node] = new CommandArguments(Command.GET).add(this.ownMarkers[node]);
			}
		}
		else {
			this.ownMarkers = null;
			this.readOwnMarkers = null;
		}
	}

	/**
	 * Makes one attempt: one round on every node, then either a won lock or the clean-up
	 * of every node where our value may have landed.
	 * @param key its lock key
	 * @param ttl the checked TTL
	 * @param fenced whether to take a fencing token
	 * @return what the attempt found
	 */
	public AcquireAttempt attempt(RawArgument key, Duration ttl, boolean fenced) {
		// an attempt takes at most two node timeouts, whatever it meets: its own values
		// left on the nodes removed first (at most one), its round (one), and what
		// follows it (a token to confirm, scripts to send again, the clean-up of a lost
		// round) in what is left; what there is no time for goes to the late clean-up
		long timeout = this.settings.nodeTimeout().toNanos();
		long deadline = System.nanoTime() + 2 * timeout;
		this.rounds.removeOwnLeftovers(key, deadline - timeout);
		RawArgument value = LockValues.next();
		RawArgument ttlArgument = ttlArgument(ttl.toMillis());
		boolean @Nullable [] voters = this.group.select(key);
		RoundCommand acquire = acquireCommand(key, value, ttlArgument, fenced, voters);
		long start = this.ticker.getAsLong();
		long expiresAt = System.nanoTime() + ttl.toNanos();
		AcquireExit exit = new AcquireExit(key, value, fenced, expiresAt);
		// a fencing script a node lost goes again by source, within the attempt's bound
		Fanout bounded = fenced ? this.group.fanout().until(deadline) : null;
		Fanout fanout = (bounded != null) ? bounded : this.group.fanout();
		// a grant counts where it reached the replicas waited for
		NodeReply[] replies = fanout.execute(this.group.replicaWaits().counted(acquire, fanout), voters, exit);
		try {
			return settle(key, value, ttl, fenced, replies, voters, start, expiresAt, exit, deadline);
		}
		catch (Throwable ex) {
			// nothing of ours should fail here; if it does, our value must not stay where
			// it landed
			this.rounds.runScript(NodeCommand.RELEASE, LockScripts.DISCARD, key, voters, null, value);
			throw ex;
		}
	}

	/** What an attempt writes to each node it asks. */
	private RoundCommand acquireCommand(RawArgument key, RawArgument value, RawArgument ttl, boolean fenced,
			boolean @Nullable [] voters) {
		if (fenced) {
			// the counter is raised in the same step as the SET: a later holder's SET on
			// this node comes after our key left, so its count exceeds ours
			if (this.judged && this.ownMarkers != null) {
				RawArgument[] markers = this.ownMarkers;
				return perNode((node) -> RoundCommand
					.of(fencingScript(LockScripts.ACQUIRE_FENCED_OWN_MARKER, key, value, ttl).add(markers[node])));
			}
			Script script = this.judged ? LockScripts.ACQUIRE_FENCED : LockScripts.ACQUIRE_COUNTED;
			return RoundCommand.of(fencingScript(script, key, value, ttl));
		}
		CommandArguments set = new CommandArguments(Command.SET).add(key)
			.add(value)
			.add(Keyword.NX)
			.add(Keyword.PX)
			.add(ttl);
		// with the quarantine on, the node's clock and marker are read right behind the
		// SET, in the same round trip: they judge this very grant. Not atomic, and need
		// not be: a flush or failover between them leaves the marker gone or new, which
		// distrusts the node, and a restart breaks the connection
		if (this.judged && this.readOwnMarkers != null) {
			CommandArguments[] readMarkers = this.readOwnMarkers;
			return perNode((node) -> RoundCommand.pipelined(set, READ_TIME, readMarkers[node]));
		}
		return this.judged ? RoundCommand.pipelined(set, READ_TIME, READ_MARKER) : RoundCommand.of(set);
	}

	/**
	 * A command for each node: for nodes whose marker is a key of their own. Every node
	 * has its own, not only those the round asks: a cluster node that redirects the round
	 * sends it to another node of its voter.
	 * @param forNode the command of a node, given its index
	 */
	private RoundCommand perNode(IntFunction<RoundCommand> forNode) {
		RoundCommand[] byNode = new RoundCommand[this.group.layout().nodes()];
		for (int node = 0; node < byNode.length; node++) {
			byNode[node] = forNode.apply(node);
		}
		return RoundCommand.perNode(byNode);
	}

	/**
	 * Decides an acquisition round: a lease, or the clean-up of every node where our
	 * value may have landed.
	 */
	private AcquireAttempt settle(RawArgument key, RawArgument value, Duration ttl, boolean fenced, NodeReply[] replies,
			boolean @Nullable [] voters, long start, long expiresAt, AcquireExit exit, long deadline) {
		// listeners first: the time they take counts in the validity, which is read after
		this.group.events().nodeReplies(NodeCommand.ACQUIRE, replies, grants(fenced));
		long end = this.ticker.getAsLong();
		long validUntil = start + ttl.toNanos() - this.settings.driftNanosFor(ttl.toNanos());
		int granted = exit.granted(replies);
		if (this.group.quorum().reached(granted) && validUntil - end > 0) {
			long token = 0;
			if (fenced) {
				token = confirmToken(key, value, replies, voters, exit, deadline);
				end = this.ticker.getAsLong();
			}
			if (!fenced || (token > 0 && validUntil - end > 0)) {
				return new AcquireAttempt(this.group, true, value, token, writtenTo(replies), answeredLate(replies),
						replies, granted, start, end, validUntil);
			}
		}
		// Ours may have landed wherever the SET was written and not refused, even where
		// the reply timed out. The nodes that answered get the release now; the others,
		// slow or failed, get it off the caller's path, from their late-reply thread,
		// after the SET's own reply (so it cannot overtake the SET), until the TTL has
		// passed
		boolean[] answered = new boolean[replies.length];
		boolean any = false;
		for (int i = 0; i < replies.length; i++) {
			NodeReply reply = replies[i];
			if (reply != null && AcquireAttempt.mayHoldValue(reply)) {
				if (reply.isDefinite()) {
					answered[i] = true;
					any = true;
				}
				else {
					this.group.cleanup().remove(i, key, value, expiresAt);
				}
			}
		}
		if (any) {
			NodeReply[] released = this.rounds.runScript(deadline, NodeCommand.RELEASE, LockScripts.DISCARD, key,
					answered, null, value);
			for (int i = 0; i < answered.length; i++) {
				if (answered[i] && (released == null || !released[i].isDefinite())) {
					this.group.cleanup().remove(i, key, value, expiresAt);
				}
			}
		}
		if (logger.isDebugEnabled()) {
			// never the resource: it may be what
			// redlock.observation.include-resource=false
			// keeps out of traces (the exception to the caller names it)
			logger.debug("Lock not acquired: granted by {} of {} nodes, quorum {}", granted, replies.length,
					this.group.quorum().size());
		}
		return new AcquireAttempt(this.group, false, value, 0, 0, 0, replies, granted, start, end, validUntil);
	}

	/** Which replies grant the lock, without a new predicate per round. */
	private static Predicate<NodeReply> grants(boolean fenced) {
		return fenced ? FENCED_GRANTS : GRANTS;
	}

	/**
	 * The nodes whose reply a round left to their late-reply thread, one bit per node
	 * index.
	 */
	private static long answeredLate(NodeReply[] replies) {
		long late = 0;
		for (NodeReply reply : replies) {
			if (reply != null && reply.kind() == NodeReply.Kind.NOT_AWAITED && reply.written()
					&& reply.node() < Long.SIZE) {
				late |= 1L << reply.node();
			}
		}
		return late;
	}

	/** The nodes a round wrote to, one bit per node index. */
	private static long writtenTo(NodeReply[] replies) {
		long written = 0;
		for (NodeReply reply : replies) {
			if (reply != null && reply.written() && reply.node() < Long.SIZE) {
				written |= 1L << reply.node();
			}
		}
		return written;
	}

	/**
	 * The TTL as sent; the last one is kept, since a call site usually locks with the
	 * same TTL every time.
	 */
	private RawArgument ttlArgument(long millis) {
		TtlArgument last = this.lastTtl;
		if (last == null || last.millis != millis) {
			last = new TtlArgument(millis, RawArgument.of(millis));
			this.lastTtl = last;
		}
		return last.argument;
	}

	private record TtlArgument(long millis, RawArgument argument) {
	}

	/**
	 * The token of a fenced acquisition: the highest count among the grants that count
	 * (each raised its node's counter with its grant). A token stands once a quorum of
	 * counters reached it while our key was there: any later holder's quorum then shares
	 * a node with that one, where its grant comes after our key left and counts higher.
	 * When a quorum of the grants counted the token already, that is so; else a second
	 * round raises the counter to the token on every node that still holds our value, and
	 * the token stands only if a quorum confirms it.
	 * @return the token, or 0 if no quorum confirmed it
	 */
	private long confirmToken(RawArgument key, RawArgument value, NodeReply[] grants, boolean @Nullable [] voters,
			AcquireExit exit, long deadline) {
		long candidate = 0;
		int atCandidate = 0;
		for (NodeReply reply : grants) {
			if (exit.counts(reply, grants)) {
				long count = AcquireReply.grant(reply.value());
				if (count > candidate) {
					candidate = count;
					atCandidate = 0;
				}
				if (count == candidate) {
					atCandidate++;
				}
			}
		}
		if (!this.confirmTokens || this.group.quorum().reached(atCandidate)) {
			return candidate;
		}
		// returns once a quorum confirmed (or can no longer): a slow node costs nothing
		Fanout fanout = this.group.fanout().until(deadline);
		if (fanout == null) {
			return 0;
		}
		RawArgument token = RawArgument.of(candidate);
		RawArgument[] markers = this.ownMarkers;
		RoundCommand raise = (this.judged && markers != null)
				? perNode((node) -> RoundCommand
					.of(fencingScript(LockScripts.RAISE_FENCE_OWN_MARKER, key, value, token).add(markers[node])))
				: RoundCommand.of(fencingScript(LockScripts.RAISE_FENCE, key, value, token));
		NodeReply[] replies = fanout.execute(this.group.replicaWaits().counted(raise, fanout), voters,
				this.rounds.quorumExit(NodeCommand.FENCE));
		this.group.events().nodeReplies(NodeCommand.FENCE, replies, NodeReply::isConfirmed);
		return this.group.quorum().reached(this.rounds.countingConfirmations(replies)) ? candidate : 0;
	}

	/**
	 * Turns the second round of fenced acquisitions off or on; off only in the test that
	 * shows why it is needed.
	 */
	public void confirmTokens(boolean confirm) {
		this.confirmTokens = confirm;
	}

	/** A call of a fencing script by its digest: the lock key, then its counter. */
	private CommandArguments fencingScript(Script script, RawArgument key, RawArgument value, RawArgument argument) {
		return new CommandArguments(Command.EVALSHA).add(script.sha1())
			.add(LockScripts.TWO_KEYS)
			.add(key)
			.add(this.group.layout().keys().counterKey(key))
			.add(value)
			.add(argument);
	}

	/**
	 * Ends an acquisition round as soon as its outcome is known: a quorum has granted, or
	 * so many nodes refused (or failed) that no quorum is left. A slow node then delays
	 * neither a lock already won nor the retry of a lock already lost; when lost, the
	 * nodes not awaited get the release right behind the {@code SET}.
	 */
	private final class AcquireExit implements EarlyExit, Quorum.Vote {

		private final RawArgument key;

		private final RawArgument value;

		private final boolean fenced;

		private final long expiresAt;

		private final @Nullable NodeJudge judge;

		AcquireExit(RawArgument key, RawArgument value, boolean fenced, long expiresAt) {
			this.key = key;
			this.value = value;
			this.fenced = fenced;
			this.expiresAt = expiresAt;
			// without quarantines, every node is trusted: nothing to judge
			this.judge = AcquireRound.this.judged
					? new NodeJudge(AcquireRound.this.group.quarantines(), AcquireRound.this.group.quorum(),
							AcquireRound.this.settings.clockTolerance().toNanos(), System::nanoTime)
					: null;
		}

		/**
		 * How many of the replies read so far are grants that count: a quarantined node's
		 * do not, nor those of a node whose clock or marker the reply proves may have
		 * forgotten, or whose clock is not yet proven to agree with the others', nor, for
		 * a fenced lock, those whose counter no quorum confirmed since the node last
		 * forgot.
		 */
		int granted(NodeReply[] replies) {
			readClocks(replies);
			return AcquireRound.this.group.quorum().agreeing(replies, this);
		}

		/** Whether a reply is a grant that counts. */
		boolean counts(@Nullable NodeReply reply, NodeReply[] replies) {
			if (reply == null) {
				return false;
			}
			readClocks(replies);
			return verdict(reply) == NodeJudge.COUNTS;
		}

		@Override
		public void readMeanwhile(NodeReply[] replies) {
			readClocks(replies);
		}

		/** Lets the judge take in the clocks of the replies read since it last did. */
		private void readClocks(NodeReply[] replies) {
			if (this.judge != null) {
				this.judge.read(replies);
			}
		}

		/** A reply's verdict, once the judge has read the round's replies. */
		private byte verdict(NodeReply reply) {
			// a quarantined node may have forgotten a lock someone else still holds: its
			// grant proves nothing
			if (!AcquireAttempt.isGrant(reply, this.fenced)
					|| (this.fenced && AcquireReply.readAnotherValue(reply.value(), this.value.getRaw()))) {
				return NodeJudge.REFUSED;
			}
			if (this.judge == null) {
				return AcquireRound.this.group.counts(reply.node()) ? NodeJudge.COUNTS : NodeJudge.REFUSED;
			}
			byte verdict = this.judge.judge(reply);
			if (verdict == NodeJudge.COUNTS && this.fenced && !this.judge.confirmedCounter(reply)) {
				return NodeJudge.REFUSED;
			}
			return verdict;
		}

		@Override
		public boolean settled(NodeReply[] replies) {
			readClocks(replies);
			return AcquireRound.this.group.quorum().settledBy(replies, this);
		}

		/**
		 * How a reply counts once the judge has read the round's replies: a grant still
		 * {@link NodeJudge#PENDING pending} may count once more clocks are in, so it is
		 * not a refusal yet.
		 */
		@Override
		public byte of(NodeReply reply) {
			if (reply.isNoScript() || reply.redirection() != null) {
				// a node that lost the fencing script is asked again by its source, one
				// that redirected is followed: its voter's answer is still to come
				return NOT_YET;
			}
			byte verdict = verdict(reply);
			return (verdict == NodeJudge.COUNTS) ? AGREES : (verdict == NodeJudge.PENDING) ? NOT_YET : REFUSES;
		}

		@Override
		public @Nullable CommandArguments toNotAwaited(NodeReply[] replies) {
			if (AcquireRound.this.group.quorum().reached(granted(replies))) {
				// won: the lease's release goes to every node
				return null;
			}
			// by source, not digest: nobody reads this reply in time to retry after
			// NOSCRIPT
			return LockScripts.call(Command.EVAL, LockScripts.DISCARD.source(), this.key, this.value);
		}

		@Override
		public void lateReply(NodeReply reply, @Nullable NodeReply followUp) {
			AcquireRound.this.group.events()
				.nodeReplies(NodeCommand.ACQUIRE, new NodeReply[] { reply }, grants(this.fenced));
			if (followUp != null && !AcquireAttempt.isRefusal(reply) && !AcquireAttempt.ranNothing(reply)
					&& !followUp.isDefinite()) {
				// a lost round's release did not reach a node that may hold our value (a
				// won round's lease releases on every node itself)
				AcquireRound.this.group.cleanup().remove(reply.node(), this.key, this.value, this.expiresAt);
			}
		}

	}

}
