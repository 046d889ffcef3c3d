package dev.redlock.core.internal.round;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.protocol.LockScripts;
import dev.redlock.core.internal.protocol.LockScripts.Script;
import dev.redlock.core.internal.protocol.NativeForm;
import dev.redlock.core.internal.transport.PipelinedConnection;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * What a round writes to each node and reads back: one command, or a few written together
 * (pipelined: the node runs them in order, though not atomically) whose replies read as
 * one list. A compound costs the round no extra round trip. A node that answers a call of
 * one of our lock scripts by its digest ({@code EVALSHA}) with {@code NOSCRIPT} lost its
 * script cache after the connection loaded it, nothing ran there, and the {@link Fanout}
 * sends it the same calls again by the script's source ({@link #bySource()}). A cluster
 * node that answers {@code ASK} is sent the same calls behind {@code ASKING}
 * ({@link #asking()}). A node that must have its writes replicated gets {@code WAIT}
 * right behind them ({@link #awaiting}), and its reply fails when too few replicas
 * acknowledged them ({@link NotReplicatedException}).
 */
public final class RoundCommand {

	private static final CommandArguments ASKING = new CommandArguments(Command.ASKING);

	/** The command, when there is one: most rounds send one, with no array around it. */
	private final @Nullable CommandArguments single;

	private final CommandArguments @Nullable [] parts;

	/** How the parts' replies are read. */
	private final Shape shape;

	/**
	 * Whether a call calls a script (by digest or source), which a node with native
	 * commands may get in their form: only then are {@link #nativeForms} made.
	 */
	private final boolean mayGoNatively;

	/** The calls as nodes with native commands get them, once one of them was written. */
	private volatile NativeForm @Nullable [] nativeForms;

	/** Each node's own command, by node index, for a command that differs by node. */
	private final RoundCommand @Nullable [] byNode;

	/**
	 * Whether {@code ASKING} goes first: the node imports the slot of the key from the
	 * node that answered {@code ASK}.
	 */
	private final boolean asking;

	/** {@code WAIT} for this many replicas goes last, or none when 0. */
	private final int awaitedReplicas;

	/** The timeout {@code WAIT} is sent with. */
	private final long waitMillis;

	private RoundCommand(@Nullable CommandArguments single, CommandArguments @Nullable [] parts, Shape shape) {
		this(single, parts, shape, false, 0, 0);
	}

	private RoundCommand(@Nullable CommandArguments single, CommandArguments @Nullable [] parts, Shape shape,
			boolean asking, int awaitedReplicas, long waitMillis) {
		this.single = single;
		this.parts = parts;
		this.shape = shape;
		this.mayGoNatively = (single != null) ? isScriptCall(single) : anyScriptCall(parts);
		this.byNode = null;
		this.asking = asking;
		this.awaitedReplicas = awaitedReplicas;
		this.waitMillis = waitMillis;
	}

	private RoundCommand(RoundCommand[] byNode, RoundCommand first) {
		this.single = null;
		this.parts = null;
		this.shape = first.shape;
		this.mayGoNatively = false;
		this.byNode = byNode;
		this.asking = false;
		this.awaitedReplicas = 0;
		this.waitMillis = 0;
	}

	private static boolean anyScriptCall(CommandArguments[] parts) {
		for (CommandArguments part : parts) {
			if (isScriptCall(part)) {
				return true;
			}
		}
		return false;
	}

	private static boolean isScriptCall(CommandArguments call) {
		return call.getCommand() == Command.EVALSHA || call.getCommand() == Command.EVAL;
	}

	/** One command. */
	public static RoundCommand of(CommandArguments command) {
		return new RoundCommand(command, null, Shape.PIPELINED);
	}

	/**
	 * Commands written together, whose replies read as a list; an error reply to a later
	 * one stands in the list, an error reply to the first fails the whole (once every
	 * reply is read, so the connection owes nothing).
	 */
	public static RoundCommand pipelined(CommandArguments... parts) {
		return new RoundCommand(null, parts, Shape.PIPELINED);
	}

	/**
	 * Many commands written together, each on its own: their replies read as a list in
	 * which an error reply to any of them stands in its place. The round trip does not
	 * count as the node's latency: a node takes longer to run many commands than one, and
	 * the rounds of single locks must not take it for a slow node.
	 */
	public static RoundCommand batch(List<CommandArguments> parts) {
		return new RoundCommand(null, parts.toArray(new CommandArguments[0]), Shape.BATCH);
	}

	/**
	 * A command that differs by node (a key each node keeps in a slot of its own, say),
	 * the same in shape for every node: a round writes each node its own.
	 * @param byNode each node's command, by node index; {@code null} for a node no round
	 * of it asks, none of them compound of commands that differ by node
	 */
	public static RoundCommand perNode(@Nullable RoundCommand[] byNode) {
		RoundCommand first = null;
		for (RoundCommand command : byNode) {
			if (command != null && command.byNode != null) {
				throw new IllegalArgumentException("a node's own command must be one for that node");
			}
			first = (first == null) ? command : first;
		}
		if (first == null) {
			throw new IllegalArgumentException("no node's command");
		}
		return new RoundCommand(byNode.clone(), first);
	}

	/**
	 * The command a node gets: its own, for a command that differs by node, else this.
	 * @param node the node's index
	 */
	public RoundCommand forNode(int node) {
		if (this.byNode == null) {
			return this;
		}
		RoundCommand own = this.byNode[node];
		if (own == null) {
			throw new IllegalStateException("no command for node " + node);
		}
		return own;
	}

	/**
	 * The command a node gets, as {@link #forNode}, or {@code null} when the command
	 * differs by node and has none for it.
	 * @param node the node's index
	 */
	@Nullable RoundCommand forNodeIfAny(int node) {
		return (this.byNode == null) ? this : this.byNode[node];
	}

	/**
	 * The same calls behind {@code ASKING}, for the node a cluster's {@code ASK}
	 * redirection names: that node imports the key's slot, and takes a command on its
	 * keys only right after {@code ASKING}. Its reply is read and left out.
	 * @throws IllegalStateException for a batch or a command that differs by node
	 */
	RoundCommand asking() {
		if (this.byNode != null || this.shape == Shape.BATCH) {
			throw new IllegalStateException("ASKING goes before one node's single command or compound");
		}
		return new RoundCommand(this.single, this.parts, this.shape, true, this.awaitedReplicas, this.waitMillis);
	}

	/**
	 * The same calls followed by {@code WAIT replicas timeout}: the node's reply reads as
	 * {@link NotReplicatedException} (for a batch, in the place of each call's reply)
	 * when fewer replicas acknowledged them, so that nothing written there counts. The
	 * calls ran: what they wrote stays to be cleaned up.
	 * @param replicas how many replicas must acknowledge, at least 1
	 * @param timeoutMillis the timeout {@code WAIT} is sent with, at least 1 (0 would
	 * wait for ever)
	 * @throws IllegalStateException for a command that differs by node
	 */
	RoundCommand awaiting(int replicas, long timeoutMillis) {
		if (this.byNode != null) {
			throw new IllegalStateException("WAIT goes behind one node's command");
		}
		if (replicas < 1 || timeoutMillis < 1) {
			throw new IllegalArgumentException("WAIT needs a replica and a timeout");
		}
		return new RoundCommand(this.single, this.parts, this.shape, this.asking, replicas, timeoutMillis);
	}

	/** Whether a round may send the command again where a cluster redirects it. */
	boolean followsRedirections() {
		return this.shape != Shape.BATCH;
	}

	/** The calls written, in order. */
	List<CommandArguments> calls() {
		return (this.single != null) ? List.of(this.single) : List.of(this.parts);
	}

	/** Whether the command calls a script by its digest: only then may a node lack it. */
	boolean callsScript() {
		if (this.byNode != null) {
			for (RoundCommand own : this.byNode) {
				if (own != null && own.callsScript()) {
					return true;
				}
			}
			return false;
		}
		CommandArguments first = (this.single != null) ? this.single : this.parts[0];
		return first.getCommand() == Command.EVALSHA;
	}

	/**
	 * Whether a node's reply says it lacks the script the command calls by digest: it
	 * answered {@code NOSCRIPT}, to the call or to any call of a compound.
	 */
	public static boolean lacksScript(NodeReply reply) {
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
	 * The same calls with each of our lock scripts called by its source, not its digest,
	 * for the nodes that lack it ({@code EVAL} caches it there again); {@code null} when
	 * the command calls none of them by digest.
	 */
	@Nullable RoundCommand bySource() {
		if (this.byNode != null) {
			RoundCommand[] bySource = new RoundCommand[this.byNode.length];
			boolean any = false;
			for (int i = 0; i < bySource.length; i++) {
				RoundCommand own = (this.byNode[i] != null) ? this.byNode[i].bySource() : null;
				any |= own != null;
				bySource[i] = (own != null) ? own : this.byNode[i];
			}
			return any ? new RoundCommand(bySource, this) : null;
		}
		if (this.single != null) {
			CommandArguments call = bySource(this.single);
			return (call != null)
					? new RoundCommand(call, null, this.shape, this.asking, this.awaitedReplicas, this.waitMillis)
					: null;
		}
		CommandArguments[] calls = new CommandArguments[this.parts.length];
		boolean any = false;
		for (int i = 0; i < calls.length; i++) {
			CommandArguments call = bySource(this.parts[i]);
			any |= call != null;
			calls[i] = (call != null) ? call : this.parts[i];
		}
		return any ? new RoundCommand(null, calls, this.shape, this.asking, this.awaitedReplicas, this.waitMillis)
				: null;
	}

	/**
	 * {@code SCRIPT LOAD} of each of our lock scripts the command calls by digest, for a
	 * node that lacks them.
	 * @return the loads, none when it calls none of them by digest
	 */
	List<CommandArguments> scriptLoads() {
		if (this.byNode != null) {
			throw new IllegalStateException("a command that differs by node: ask the node's own");
		}
		List<CommandArguments> loads = new ArrayList<>(1);
		for (CommandArguments call : calls()) {
			Script script = calledByDigest(call);
			if (script != null) {
				loads.add(new CommandArguments(Command.SCRIPT).add("LOAD").add(script.source()));
			}
		}
		return loads;
	}

	/**
	 * {@code EVALSHA digest numkeys keys... args...} as {@code EVAL source numkeys
	 * keys... args...}, or {@code null} for another command or a digest not ours.
	 */
	private static @Nullable CommandArguments bySource(CommandArguments byDigest) {
		Script script = calledByDigest(byDigest);
		if (script == null) {
			return null;
		}
		CommandArguments call = new CommandArguments(Command.EVAL).add(script.source());
		for (int i = 2; i < byDigest.size(); i++) {
			call.add(byDigest.get(i));
		}
		return call;
	}

	/** The lock script a call calls by digest, or {@code null} for any other call. */
	private static @Nullable Script calledByDigest(CommandArguments call) {
		return (call.getCommand() == Command.EVALSHA && call.size() >= 2) ? LockScripts.byDigest(call.get(1).getRaw())
				: null;
	}

	/**
	 * A node's reply to the calls by digest, with the reply to the same calls by source
	 * in the place of what the node could not run: the whole reply for one call, each
	 * {@code NOSCRIPT} answer of a compound (the calls that did run keep their answer:
	 * run again, a release would find nothing to delete).
	 * @param byDigest a reply that {@link #lacksScript lacks the script}
	 * @param bySource the node's reply to {@link #bySource()}
	 */
	static NodeReply merge(NodeReply byDigest, NodeReply bySource) {
		if (byDigest.kind() != NodeReply.Kind.REPLIED || bySource.kind() != NodeReply.Kind.REPLIED
				|| !(byDigest.value() instanceof List<?> first) || !(bySource.value() instanceof List<?> second)
				|| first.size() != second.size()) {
			return bySource;
		}
		List<@Nullable Object> merged = new ArrayList<>(first.size());
		for (int i = 0; i < first.size(); i++) {
			merged.add((first.get(i) instanceof JedisNoScriptException) ? second.get(i) : first.get(i));
		}
		return NodeReply.replied(bySource.node(), merged, bySource.nanos());
	}

	/** Whether the round trip measures the node's latency (not for a batch). */
	boolean measuresLatency() {
		return this.shape != Shape.BATCH;
	}

	/** Buffers the command's parts on the connection, to be flushed by the caller. */
	public void writeTo(PipelinedConnection connection) {
		if (this.byNode != null) {
			throw new IllegalStateException("a command that differs by node: write the node's own");
		}
		if (this.asking) {
			connection.send(ASKING);
		}
		writeCallsTo(connection);
		if (this.awaitedReplicas > 0) {
			connection.send(new CommandArguments(Command.WAIT).add(this.awaitedReplicas).add(this.waitMillis));
		}
	}

	private void writeCallsTo(PipelinedConnection connection) {
		if (this.mayGoNatively && connection.runsNativeCommands()) {
			for (NativeForm form : nativeForms()) {
				connection.send(form);
			}
			return;
		}
		if (this.single != null) {
			connection.send(this.single);
			return;
		}
		for (CommandArguments part : this.parts) {
			connection.send(part);
		}
	}

	/**
	 * The calls in the form the nodes with native commands get them, made for the first
	 * such node and shared by the others.
	 */
	private NativeForm[] nativeForms() {
		NativeForm[] forms = this.nativeForms;
		if (forms == null) {
			List<CommandArguments> calls = calls();
			forms = new NativeForm[calls.size()];
			for (int i = 0; i < forms.length; i++) {
				forms[i] = new NativeForm(calls.get(i));
			}
			this.nativeForms = forms;
		}
		return forms;
	}

	/**
	 * Reads the reply, or the list of replies of a compound. Behind {@code WAIT}, it
	 * comes with how long the acknowledgements took, which {@link NodeReply#replied}
	 * keeps apart.
	 * @throws JedisDataException for an error reply to the first command of a compound;
	 * never for a batch
	 */
	public @Nullable Object readFrom(PipelinedConnection connection) {
		return readFrom(connection, null);
	}

	/**
	 * Reads the reply as {@link #readFrom(PipelinedConnection)} does, doing something
	 * else while {@code WAIT} keeps it.
	 * @param whileWaiting run once the calls' reply is read and before {@code WAIT}'s is:
	 * it returns once that has arrived, or may block no longer
	 */
	public @Nullable Object readFrom(PipelinedConnection connection, @Nullable Runnable whileWaiting) {
		if (this.byNode != null) {
			throw new IllegalStateException("a command that differs by node: read the node's own");
		}
		if (this.asking) {
			readAskingReply(connection);
		}
		if (this.awaitedReplicas == 0) {
			return readCallsFrom(connection);
		}
		Object replies;
		try {
			replies = readCallsFrom(connection);
		}
		catch (JedisDataException ex) {
			// the calls failed: WAIT's reply is read all the same, nothing is owed
			runWhileWaiting(whileWaiting);
			readWaitReply(connection);
			throw ex;
		}
		long callsRead = System.nanoTime();
		runWhileWaiting(whileWaiting);
		Object acknowledged = readWaitReply(connection);
		if (acknowledged instanceof Long count && count >= this.awaitedReplicas) {
			return new ReplicatedReply(replies, System.nanoTime() - callsRead);
		}
		NotReplicatedException notReplicated = (acknowledged instanceof Long count)
				? NotReplicatedException.acknowledgedBy(count, this.awaitedReplicas, this.waitMillis)
				: NotReplicatedException.refused(String.valueOf(acknowledged), this.awaitedReplicas);
		if (this.shape == Shape.BATCH && replies instanceof List<?> each) {
			List<@Nullable Object> refused = new ArrayList<>(each.size());
			for (int i = 0; i < each.size(); i++) {
				refused.add(notReplicated);
			}
			return refused;
		}
		throw notReplicated;
	}

	private static void runWhileWaiting(@Nullable Runnable whileWaiting) {
		if (whileWaiting != null) {
			whileWaiting.run();
		}
	}

	/** Whether {@code WAIT} follows the calls. */
	public boolean awaitsReplicas() {
		return this.awaitedReplicas > 0;
	}

	/**
	 * Reads the reply to {@code WAIT}: how many replicas acknowledged the connection's
	 * writes, or the error text of a server that refuses {@code WAIT}.
	 */
	private static @Nullable Object readWaitReply(PipelinedConnection connection) {
		try {
			return connection.readReply();
		}
		catch (JedisDataException refused) {
			return refused.getMessage();
		}
	}

	private @Nullable Object readCallsFrom(PipelinedConnection connection) {
		if (this.single != null) {
			return connection.readReply();
		}
		List<@Nullable Object> replies = new ArrayList<>(this.parts.length);
		JedisDataException first = null;
		for (int i = 0; i < this.parts.length; i++) {
			try {
				replies.add(connection.readReply());
			}
			catch (JedisDataException ex) {
				replies.add(ex);
				if (first == null && i == 0 && this.shape == Shape.PIPELINED) {
					first = ex;
				}
			}
		}
		if (first != null) {
			throw first;
		}
		return replies;
	}

	/**
	 * Reads the reply to {@code ASKING} and leaves it out: refused (by a node not in
	 * cluster mode), the command behind it runs as if sent alone, and its own reply says
	 * so.
	 */
	private static void readAskingReply(PipelinedConnection connection) {
		try {
			connection.readReply();
		}
		catch (JedisDataException refused) {
			// the reply was read: nothing is owed
		}
	}

	/** How a compound's replies are read. */
	private enum Shape {

		/** An error reply to the first command fails the whole; the others are extras. */
		PIPELINED,

		/**
		 * Every command stands on its own, and the round trip is not the node's latency.
		 */
		BATCH

	}

}
