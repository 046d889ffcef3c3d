package dev.redlock.core.internal.quarantine;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.internal.protocol.HashSlot;
import dev.redlock.core.internal.protocol.KeyLayout;
import dev.redlock.core.internal.protocol.LockScripts;
import dev.redlock.core.internal.round.Quorum;
import dev.redlock.core.internal.round.VoterLayout;
import dev.redlock.core.internal.thread.OnDemandThread;
import dev.redlock.core.internal.transport.NodeConnectionPool;
import dev.redlock.core.internal.transport.PipelinedConnection;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;

/**
 * Re-seeds the fencing counters of a node that forgot (its marker says
 * {@code counters pending}) from the other nodes, off the callers' paths, so that fenced
 * locks count it again: every counter it may have lost is raised to the highest value
 * that at least {@code N - quorum + 1} other voters hold, which includes one voter of any
 * quorum that confirmed a token before (unless a majority forgot at once), and recorded
 * with the node's marker generation; then the marker says {@code counters ok}. Until
 * then, the node's counters count only where a quorum confirmed them since. Only nodes
 * whose own counters are trusted ({@code counters ok} before and after their counters are
 * read, the same marker) count towards those {@code N - quorum + 1}: a node that forgot
 * too holds nothing of the tokens it lost, and with a second one of the confirming quorum
 * forgetful, the others read could all be nodes that never saw the token. When more than
 * {@code N - quorum} nodes are found forgetful (new nodes: every marker starts
 * {@code pending}), no token is left to keep, and the counters of every node read are
 * taken. One thread per {@code Redlock}, on demand; an attempt that reads too few nodes
 * is made again when the marker is next seen. Of a voter of several nodes (shards), the
 * nodes read are those that serve some of the forgetful node's slots, and the voter is
 * worth what the least trusted of them is worth: the nodes of its own voter serve other
 * slots, and hold none of its counters.
 */
public final class CounterReseed implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(CounterReseed.class);

	private static final int BATCH = 200;

	private final List<NodeConnectionPool> pools;

	/** Which nodes make up each voter, and which slots each serves now. */
	private final Supplier<VoterLayout> layouts;

	private final Quorum quorum;

	private final int timeoutMillis;

	private final OnDemandThread thread = new OnDemandThread(OnDemandThread.numbered("redlock-reseed-"));

	/** Re-seeds tried, done or not: for tests. */
	private final AtomicInteger attempts = new AtomicInteger();

	/** Generations asked for and not failed yet, as {@code node:nonce}. */
	private final Set<String> requested = ConcurrentHashMap.newKeySet();

	/**
	 * @param pools every node's pool, in node order
	 * @param layouts which nodes make up each voter, and which slots each serves now
	 * @param quorum the voters' quorum
	 * @param timeoutMillis the bound for connecting and for each read
	 */
	public CounterReseed(List<NodeConnectionPool> pools, Supplier<VoterLayout> layouts, Quorum quorum,
			int timeoutMillis) {
		this.pools = pools;
		this.layouts = layouts;
		this.quorum = quorum;
		this.timeoutMillis = timeoutMillis;
	}

	/**
	 * Re-seeds the node's counters in the background, once per marker generation.
	 * @param node the node's index
	 * @param marker its marker, which says its counters are pending
	 */
	public void request(int node, NodeMarker marker) {
		String generation = node + ":" + marker.nonce();
		if (this.requested.add(generation)) {
			this.thread.execute(() -> {
				if (!reseed(node, marker)) {
					this.requested.remove(generation);
				}
			}, () -> {
				// closed: another client, or a later one, re-seeds it
			});
		}
	}

	/**
	 * @return whether the node's counters are re-seeded (or another client's marker
	 * replaced it)
	 */
	private boolean reseed(int node, NodeMarker marker) {
		Map<String, Long> trusted = new HashMap<>();
		Map<String, Long> all = new HashMap<>();
		int trustedRead = 0;
		int forgetfulRead = 0;
		int ownVoter = layout().voterOf(node);
		for (int voter = 0; voter < layout().voters(); voter++) {
			if (voter != ownVoter) {
				Map<String, Long> counters = new HashMap<>();
				Source source = readVoter(voter, node, counters);
				if (source == Source.TRUSTED) {
					trustedRead++;
					counters.forEach((key, count) -> trusted.merge(key, count, Math::max));
				}
				else if (source == Source.FORGETFUL) {
					forgetfulRead++;
				}
				if (source != Source.UNREAD) {
					counters.forEach((key, count) -> all.merge(key, count, Math::max));
				}
			}
		}
		this.attempts.incrementAndGet();
		// so many voters hold a member of any quorum that confirmed a token
		int needed = this.quorum.denying();
		Map<String, Long> highest;
		int read;
		if (trustedRead >= needed) {
			highest = trusted;
			read = trustedRead;
		}
		else if (this.quorum.lost(1 + forgetfulRead) && trustedRead + forgetfulRead >= needed) {
			// a majority forgot, or never held a counter (new nodes): no token is left to
			// keep, and no node could be re-seeded otherwise
			highest = all;
			read = trustedRead + forgetfulRead;
		}
		else {
			logger.info(
					"Fencing counters of Redis node {} not re-seeded yet: {} of the {} other voters answered with "
							+ "counters they trust, {} needed",
					this.pools.get(node).uri().redacted(), trustedRead, layout().voters() - 1, needed);
			return false;
		}
		try (PipelinedConnection connection = this.pools.get(node).connect(this.timeoutMillis)) {
			String markerKey = layout().markerKey(node);
			Object reseedScript = markerKey.equals(NodeMarker.KEY) ? LockScripts.RESEED_COUNTERS.source()
					: LockScripts.markerNamed(LockScripts.RESEED_COUNTERS, "'" + markerKey + "'");
			for (List<String> batch : inBatches(highest.keySet())) {
				CommandArguments seed = new CommandArguments(Command.EVAL).add(reseedScript).add(batch.size());
				batch.forEach(seed::add);
				seed.add(marker.nonce());
				batch.forEach((counter) -> seed.add(highest.get(counter)));
				if (Long.valueOf(-1).equals(call(connection, seed))) {
					// the node forgot again meanwhile: that generation's re-seed is
					// another's
					return true;
				}
			}
			call(connection,
					new CommandArguments(Command.EVAL).add(LockScripts.COUNTERS_RESEEDED.source())
						.add(1)
						.add(markerKey)
						.add(marker.nonce()));
			logger.info("Fencing counters of Redis node {} re-seeded from {} other voters: {} counters",
					this.pools.get(node).uri().redacted(), read, highest.size());
			return true;
		}
		catch (RuntimeException ex) {
			logger.info("Fencing counters of Redis node {} not re-seeded yet: {}",
					this.pools.get(node).uri().redacted(), ex.toString());
			return false;
		}
	}

	/**
	 * Counters in batches of at most {@link #BATCH} for a command that declares them all:
	 * each batch of one slot with the tagged key layout (some voter is a cluster), since
	 * a cluster node refuses the keys of several slots in one command
	 * ({@code CROSSSLOT}).
	 */
	private List<List<String>> inBatches(Collection<String> counters) {
		List<List<String>> batches = new ArrayList<>();
		Collection<List<String>> groups = (layout().keys() == KeyLayout.TAGGED) ? counters.stream()
			.collect(Collectors.groupingBy(this::slotOfCounter, TreeMap::new, Collectors.toList()))
			.values() : List.of(new ArrayList<>(counters));
		for (List<String> group : groups) {
			for (int from = 0; from < group.size(); from += BATCH) {
				batches.add(group.subList(from, Math.min(group.size(), from + BATCH)));
			}
		}
		return batches;
	}

	/** What a node's counters are worth as a source, the most trusted first. */
	private enum Source {

		/** Its marker says its counters are ok, the same marker before and after. */
		TRUSTED,

		/** Its marker is gone, or says its counters are pending: it forgot too. */
		FORGETFUL,

		/** It did not answer in full, or its marker changed while it was read. */
		UNREAD

	}

	/**
	 * Reads the counters another voter holds of the slots a node serves: from each of its
	 * nodes that serves some of those slots (its only node, unless the voter is sharded),
	 * worth what the least trusted of them is worth.
	 * @param counters where the counters of the node's slots go, the highest per key
	 */
	private Source readVoter(int voter, int node, Map<String, Long> counters) {
		Source worth = Source.TRUSTED;
		int first = layout().firstNodeOf(voter);
		for (int other = first; other < first + layout().nodeCountOf(voter); other++) {
			if (layout().overlap(node, other)) {
				Map<String, Long> read = new HashMap<>();
				Source source = readCounters(other, read);
				if (source.ordinal() > worth.ordinal()) {
					worth = source;
				}
				read.forEach((key, count) -> {
					if (!layout().sharded() || layout().serves(node, slotOfCounter(key))) {
						counters.merge(key, count, Math::max);
					}
				});
			}
		}
		return worth;
	}

	/** The slot of the lock a counter counts for: its stored key's. */
	private int slotOfCounter(String counterKey) {
		return HashSlot.of(layout().keys().storedKeyOfCounter(counterKey).getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * Reads every counter of a node, with what they are worth.
	 * @param counters where the node's counters go, the highest count per key
	 */
	private Source readCounters(int node, Map<String, Long> counters) {
		try (PipelinedConnection connection = this.pools.get(node).connect(this.timeoutMillis)) {
			String markerKey = layout().markerKey(node);
			Object before = call(connection, new CommandArguments(Command.GET).add(markerKey));
			NodeMarker marker = NodeMarker.parse(before);
			String cursor = "0";
			do {
				Object reply = call(connection,
						new CommandArguments(Command.SCAN).add(cursor)
							.add("MATCH")
							.add(layout().keys().counterPattern())
							.add("COUNT")
							.add(BATCH));
				List<?> page = (List<?>) reply;
				cursor = new String((byte[]) page.get(0), StandardCharsets.UTF_8);
				List<String> keys = new ArrayList<>();
				for (Object key : (List<?>) page.get(1)) {
					String name = new String((byte[]) key, StandardCharsets.UTF_8);
					// not the marker, nor a lock whose key looks like a counter's
					if (layout().keys().storedKeyOfCounter(name) != null) {
						keys.add(name);
					}
				}
				for (List<String> batch : inBatches(keys)) {
					CommandArguments mget = new CommandArguments(Command.MGET);
					batch.forEach(mget::add);
					List<?> values = (List<?>) call(connection, mget);
					for (int i = 0; i < batch.size(); i++) {
						if (values.get(i) instanceof byte[] value) {
							String stored = new String(value, StandardCharsets.UTF_8);
							int space = stored.indexOf(' ');
							long count = Long.parseLong((space < 0) ? stored : stored.substring(0, space));
							counters.merge(batch.get(i), count, Math::max);
						}
					}
				}
			}
			while (!cursor.equals("0"));
			if (marker == null || !marker.countersOk()) {
				return Source.FORGETFUL;
			}
			Object after = call(connection, new CommandArguments(Command.GET).add(markerKey));
			// else it forgot, or went back, while it was read
			return (after instanceof byte[] now && Arrays.equals((byte[]) before, now)) ? Source.TRUSTED
					: Source.UNREAD;
		}
		catch (RuntimeException ex) {
			logger.debug("Counters of Redis node {} not read: {}", this.pools.get(node).uri().redacted(),
					ex.toString());
			return Source.UNREAD;
		}
	}

	private static Object call(PipelinedConnection connection, CommandArguments command) {
		connection.send(command);
		connection.flushNow();
		return connection.readReply();
	}

	/**
	 * How many re-seeds were tried with every other node read or found out, done or not.
	 */
	public int attempts() {
		return this.attempts.get();
	}

	@Override
	public void close() {
		this.thread.close();
	}

	/** The layout now: a cluster voter's slots may move from shard to shard. */
	private VoterLayout layout() {
		return this.layouts.get();
	}

}
