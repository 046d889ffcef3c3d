package dev.redlock.core.internal.transport;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntPredicate;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.protocol.HashSlot;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * A cluster's hash slots and the shards that serve them, as one of its nodes tells it
 * ({@code CLUSTER SLOTS}, which every server version answers). A shard is a primary and
 * its replicas; it may serve several ranges of slots. The map is read whole and never
 * changes: a newer one is read again.
 */
public final class ClusterSlots {

	private final List<Shard> shards;

	private final @Nullable Shard[] bySlot;

	private ClusterSlots(List<Shard> shards) {
		this.shards = List.copyOf(shards);
		this.bySlot = new Shard[HashSlot.SLOTS];
		for (Shard shard : shards) {
			for (SlotRange range : shard.ranges()) {
				for (int slot = range.first(); slot <= range.last(); slot++) {
					this.bySlot[slot] = shard;
				}
			}
		}
	}

	/**
	 * A primary, its replicas and the slots it serves.
	 *
	 * @param primary where the primary answers
	 * @param primaryId the primary's node id
	 * @param replicas where its replicas answer
	 * @param ranges the slots it serves, in the order the node listed them
	 */
	public record Shard(HostAndPort primary, String primaryId, List<HostAndPort> replicas, List<SlotRange> ranges) {

		public Shard {
			replicas = List.copyOf(replicas);
			ranges = List.copyOf(ranges);
		}

	}

	/**
	 * Slots from the first to the last, both included.
	 *
	 * @param first the first slot
	 * @param last the last slot
	 */
	public record SlotRange(int first, int last) {

		@Override
		public String toString() {
			return (this.first == this.last) ? Integer.toString(this.first) : this.first + "-" + this.last;
		}

	}

	/**
	 * Reads the map from the first seed that answers. A seed that answers it is not a
	 * cluster node ends the reading: the voter is misconfigured.
	 * @param seeds the nodes to ask, in order
	 * @param config how to connect to them
	 * @return the map
	 * @throws NotAClusterNodeException when a seed says it is not a cluster node
	 * @throws JedisConnectionException when no seed answers, with every seed's failure
	 */
	public static ClusterSlots read(List<HostAndPort> seeds, JedisClientConfig config) {
		List<String> failures = new ArrayList<>();
		for (HostAndPort seed : seeds) {
			try {
				return readFrom(seed, config);
			}
			catch (NotAClusterNodeException ex) {
				throw ex;
			}
			catch (JedisException ex) {
				failures.add(SentinelGroup.format(seed) + ": " + ex.getMessage());
			}
		}
		throw new JedisConnectionException("no seed of the cluster told its slots: " + String.join("; ", failures));
	}

	/**
	 * Reads the map from one node.
	 * @param node the node to ask
	 * @param config how to connect to it
	 * @return the map
	 * @throws NotAClusterNodeException when the node says it is not a cluster node
	 * @throws JedisException when it cannot be asked, refuses, or answers in another form
	 */
	public static ClusterSlots readFrom(HostAndPort node, JedisClientConfig config) {
		try {
			return parse(ask(node, config), node.getHost());
		}
		catch (JedisDataException ex) {
			if (String.valueOf(ex.getMessage()).contains("cluster support disabled")) {
				throw new NotAClusterNodeException(
						SentinelGroup.format(node) + " is not a cluster node (it answered: " + ex.getMessage() + ")");
			}
			throw ex;
		}
		catch (IllegalArgumentException ex) {
			throw new JedisDataException(ex.getMessage(), ex);
		}
	}

	private static Object ask(HostAndPort seed, JedisClientConfig config) {
		PipelinedConnection connection = new PipelinedConnection(seed, config);
		try {
			connection.send(new CommandArguments(Command.CLUSTER).add("SLOTS"));
			connection.flushNow();
			return connection.readReply();
		}
		finally {
			connection.closeQuietly();
		}
	}

	/**
	 * Reads a {@code CLUSTER SLOTS} reply: ranges, each with its primary's and replicas'
	 * host, port and node id. A node whose host is not known to the one asked ({@code ""}
	 * or {@code ?}) is taken to be on the host that was asked.
	 * @param reply the reply
	 * @param askedHost the host of the node asked
	 * @throws IllegalArgumentException when the reply has another form
	 */
	static ClusterSlots parse(Object reply, String askedHost) {
		try {
			return parseRanges(reply, askedHost);
		}
		catch (ClassCastException | IndexOutOfBoundsException ex) {
			throw new IllegalArgumentException("CLUSTER SLOTS answered in another form: " + ex.getMessage(), ex);
		}
	}

	private static ClusterSlots parseRanges(Object reply, String askedHost) {
		if (!(reply instanceof List<?> ranges)) {
			throw new IllegalArgumentException("CLUSTER SLOTS answered " + reply);
		}
		Map<String, Shard> byPrimary = new LinkedHashMap<>();
		for (Object element : ranges) {
			List<?> fields = list(element);
			if (fields.size() < 3) {
				throw new IllegalArgumentException("a CLUSTER SLOTS range without a primary: " + fields);
			}
			SlotRange range = new SlotRange(slot(fields.get(0)), slot(fields.get(1)));
			if (range.first() > range.last()) {
				throw new IllegalArgumentException(
						"a CLUSTER SLOTS range from " + range.first() + " to " + range.last());
			}
			List<?> primary = list(fields.get(2));
			String primaryId = text(primary.get(2));
			List<HostAndPort> replicas = new ArrayList<>();
			for (Object replica : fields.subList(3, fields.size())) {
				replicas.add(address(list(replica), askedHost));
			}
			Shard known = byPrimary.get(primaryId);
			List<SlotRange> served = new ArrayList<>((known != null) ? known.ranges() : List.of());
			served.add(range);
			if (known != null) {
				// each range lists the replicas the node deems in order now: keep every
				// one
				known.replicas().stream().filter((r) -> !replicas.contains(r)).forEach(replicas::add);
			}
			byPrimary.put(primaryId, new Shard(address(primary, askedHost), primaryId, replicas, served));
		}
		return new ClusterSlots(new ArrayList<>(byPrimary.values()));
	}

	/**
	 * Returns the shards, in the order their first range was listed.
	 * @return the shards
	 */
	public List<Shard> shards() {
		return this.shards;
	}

	/**
	 * Returns the shard that serves a slot.
	 * @param slot the slot, from 0 to 16,383
	 * @return the shard, or {@code null} when no shard serves it
	 */
	public @Nullable Shard shardOf(int slot) {
		return this.bySlot[slot];
	}

	/**
	 * Returns the shard a node of a cluster voter follows: the one whose primary it
	 * knows, or whose replica that primary is now (a failover that kept it), else the one
	 * that serves most of the slots it serves (a failover of a primary that is gone: a
	 * failed node is left out of the map).
	 * @param known the primary the node knows, or {@code null}
	 * @param served the slots the node serves
	 * @return the shard, or {@code null} when no shard serves any of them
	 */
	public @Nullable Shard shardFollowing(@Nullable HostAndPort known, IntPredicate served) {
		if (known != null) {
			for (Shard shard : this.shards) {
				if (shard.primary().equals(known) || shard.replicas().contains(known)) {
					return shard;
				}
			}
		}
		Map<Shard, Integer> counts = new LinkedHashMap<>();
		for (int slot = 0; slot < HashSlot.SLOTS; slot++) {
			Shard serving = this.bySlot[slot];
			if (serving != null && served.test(slot)) {
				counts.merge(serving, 1, Integer::sum);
			}
		}
		return counts.entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey).orElse(null);
	}

	/**
	 * Returns the shards in the order of their first slot: a cluster voter's shard nodes'
	 * order.
	 * @return the shards, sorted
	 */
	public List<Shard> inSlotOrder() {
		List<Shard> ordered = new ArrayList<>(this.shards);
		ordered.sort(Comparator.comparingInt(ClusterSlots::firstSlot));
		return ordered;
	}

	private static int firstSlot(Shard shard) {
		return shard.ranges().stream().mapToInt(SlotRange::first).min().orElse(HashSlot.SLOTS);
	}

	/**
	 * Returns the slots no shard serves.
	 * @return the ranges, in order; empty when every slot is served
	 */
	public List<SlotRange> unserved() {
		List<SlotRange> unserved = new ArrayList<>();
		int from = -1;
		for (int slot = 0; slot <= HashSlot.SLOTS; slot++) {
			boolean served = slot < HashSlot.SLOTS && this.bySlot[slot] != null;
			if (!served && slot < HashSlot.SLOTS && from < 0) {
				from = slot;
			}
			else if ((served || slot == HashSlot.SLOTS) && from >= 0) {
				unserved.add(new SlotRange(from, slot - 1));
				from = -1;
			}
		}
		return unserved;
	}

	private static HostAndPort address(List<?> node, String askedHost) {
		String host = text(node.get(0));
		int port = (int) (long) (Long) node.get(1);
		return new HostAndPort((host.isEmpty() || host.equals("?")) ? askedHost : host, port);
	}

	private static int slot(Object value) {
		long slot = (Long) value;
		if (slot < 0 || slot >= HashSlot.SLOTS) {
			throw new IllegalArgumentException("a CLUSTER SLOTS range with slot " + slot);
		}
		return (int) slot;
	}

	private static List<?> list(Object value) {
		if (value instanceof List<?> list) {
			return list;
		}
		throw new IllegalArgumentException("CLUSTER SLOTS has " + value + " where a list belongs");
	}

	private static String text(Object value) {
		return (value instanceof byte[] bytes) ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(value);
	}

	/**
	 * A seed of a cluster voter is not a cluster node: a configuration error (a
	 * standalone server listed as a seed), not a voter that is down.
	 */
	public static final class NotAClusterNodeException extends JedisConnectionException {

		private static final long serialVersionUID = 1L;

		NotAClusterNodeException(String message) {
			super(message);
		}

	}

}
