package dev.redlock.core.internal.transport;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.TlsSettings;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Where a voter's master is now. A master at a fixed address never moves. A Sentinel
 * voter's master is the one its sentinels name
 * ({@code SENTINEL GET-MASTER-ADDR-BY-NAME}), taken only once the server itself says it
 * is a master ({@code ROLE}): a sentinel can answer with, or announce, a master that is
 * out of date. A cluster voter's shard node follows its shard's primary in the cluster's
 * map ({@code CLUSTER SLOTS}, asked of the primary known first, then of the other nodes
 * and the seeds; see {@link ClusterSlots#shardFollowing}), with the same check. Every
 * move counts a new {@link #generation()}, so that connections to the master left behind
 * are closed rather than reused, and tells the voter's connections ({@link #onMove}).
 */
final class MasterAddress {

	private static final Logger logger = LoggerFactory.getLogger(MasterAddress.class);

	private static final byte[] MASTER = "master".getBytes(StandardCharsets.US_ASCII);

	private final RedisNodeUri uri;

	private final String clientName;

	private final TlsSettings tls;

	/** The fixed address, or {@code null} for a Sentinel voter or a cluster's shard. */
	private final @Nullable Current fixed;

	/** The sentinels, the one that last answered first. */
	private volatile List<HostAndPort> sentinels;

	/**
	 * A cluster shard's: the cluster's nodes that the last map named, then its seeds.
	 */
	private volatile List<HostAndPort> clusterNodes;

	private volatile @Nullable Current current;

	/**
	 * Whether a sentinel answered {@code NOAUTH}: from then on sentinels are asked with
	 * the voter's user and password.
	 */
	private volatile boolean sentinelsWantCredentials;

	/** The last generation counted, and its address; guarded by {@code this}. */
	private int lastGeneration = -1;

	private @Nullable HostAndPort lastAddress;

	private volatile boolean closed;

	/** The sentinels' kept connections, for the questions of every refresh. */
	private final SentinelQueries queries = new SentinelQueries();

	/**
	 * Why the master refused {@code ROLE}, once it did: a connection that lands on a
	 * replica is then not told from one to the master.
	 */
	private final AtomicReference<@Nullable String> roleRefusal = new AtomicReference<>();

	private volatile Runnable moved = () -> {
	};

	/**
	 * A master's address, with the generation it counts as.
	 *
	 * @param address the server's host and port
	 * @param generation how many moves of the voter's master came before it
	 */
	record Current(HostAndPort address, int generation) {
	}

	MasterAddress(RedisNodeUri uri, String clientName, TlsSettings tls) {
		this.uri = uri;
		this.clientName = clientName;
		this.tls = tls;
		SentinelGroup group = uri.sentinel();
		ClusterShard shard = uri.cluster();
		HostAndPort configured = new HostAndPort(uri.host(), uri.port());
		this.fixed = (group == null && shard == null) ? new Current(configured, 0) : null;
		this.sentinels = (group != null) ? group.sentinels() : List.of();
		this.clusterNodes = (shard != null) ? shard.seeds() : List.of();
		if (shard != null && !shard.provisional()) {
			// the primary the slot map named when the Redlock was built
			this.current = new Current(configured, 0);
			this.lastGeneration = 0;
			this.lastAddress = configured;
		}
	}

	/** Whether the master can move: a Sentinel voter's, or a cluster shard's. */
	boolean followsFailovers() {
		return this.fixed == null;
	}

	/** Tells a task each time the master moves (not at the first resolution). */
	void onMove(Runnable task) {
		this.moved = task;
	}

	/**
	 * Returns the master's generation now: a connection opened to an earlier one is not
	 * reused.
	 */
	int generation() {
		Current known = (this.fixed != null) ? this.fixed : this.current;
		return (known != null) ? known.generation() : -1;
	}

	/**
	 * Returns the master's address now, or {@code null} while a Sentinel voter's is not
	 * known.
	 */
	@Nullable HostAndPort known() {
		Current known = (this.fixed != null) ? this.fixed : this.current;
		return (known != null) ? known.address() : null;
	}

	/**
	 * Returns where to connect: the fixed address, the master known, or the one the
	 * sentinels name now.
	 * @param timeoutMillis the bound for each sentinel's answer and each check
	 * @throws JedisConnectionException when no sentinel names a master that says it is
	 * one ({@link SentinelMasterUnknownException} when every sentinel that answered knows
	 * no master of that name)
	 */
	Current address(int timeoutMillis) {
		Current known = (this.fixed != null) ? this.fixed : this.current;
		return (known != null) ? known : resolve(timeoutMillis);
	}

	/**
	 * Checks that a new connection's server is a master, for a Sentinel voter: a server
	 * that is a replica now is forgotten, so the next connection asks the sentinels
	 * again. A server that refuses {@code ROLE} is taken as it is.
	 * @throws JedisConnectionException if the server is not a master
	 */
	void verifyMaster(PipelinedConnection connection, int generation) {
		if (this.fixed != null) {
			return;
		}
		String role = role(connection);
		if (role != null && !role.equals("master")) {
			forget(generation);
			throw new JedisConnectionException(this.uri.redacted() + ": " + SentinelGroup.format(connection.address())
					+ " is a " + role + " now, not the master; asking the sentinels again");
		}
	}

	/**
	 * Asks the sentinels where the master is, and moves there if it changed.
	 * @param timeoutMillis the bound for each sentinel's answer and the new master's
	 * check
	 */
	void refresh(int timeoutMillis) {
		if (this.fixed == null) {
			resolve(timeoutMillis);
		}
	}

	/**
	 * Hears a sentinel announce a new master ({@code +switch-master}): asks the
	 * sentinels, as an announcement can be out of date or come before the other sentinels
	 * agree.
	 */
	void announced(HostAndPort address, int timeoutMillis) {
		Current known = this.current;
		if (known == null || !known.address().equals(address)) {
			resolve(timeoutMillis);
		}
	}

	/**
	 * A cluster shard's: the nodes to ask for the slot map, the shard's own first, then
	 * the cluster's others and the seeds.
	 */
	List<HostAndPort> clusterNodes() {
		return this.clusterNodes;
	}

	/** The sentinels, in the order they are asked now. */
	List<HostAndPort> sentinels() {
		return this.sentinels;
	}

	/**
	 * Asks every sentinel, and moves to the master most of those that answered name, once
	 * it says it is a master. While the master known still says it is one, a move needs a
	 * majority of the answers: one sentinel out of date (or cut off with the former
	 * master) does not take the voter back and forth while the sentinels' views converge.
	 */
	private Current resolve(int timeoutMillis) {
		if (this.uri.cluster() != null) {
			return resolveShard(this.uri.cluster(), timeoutMillis);
		}
		SentinelGroup group = this.uri.sentinel();
		List<String> failures = new ArrayList<>();
		Map<HostAndPort, Integer> votes = new LinkedHashMap<>();
		HostAndPort firstAnswered = null;
		int unknown = 0;
		int answered = 0;
		for (HostAndPort sentinel : this.sentinels) {
			if (this.closed) {
				throw new JedisConnectionException("Redlock has been closed");
			}
			HostAndPort named;
			try {
				named = askSentinel(sentinel, group.masterName(), timeoutMillis);
			}
			catch (RuntimeException ex) {
				failures.add(SentinelGroup.format(sentinel) + ": " + ex.getMessage());
				continue;
			}
			answered++;
			if (named == null) {
				unknown++;
				failures.add(SentinelGroup.format(sentinel) + ": no master named '" + group.masterName() + "'");
				continue;
			}
			firstAnswered = (firstAnswered != null) ? firstAnswered : sentinel;
			votes.merge(named, 1, Integer::sum);
		}
		if (firstAnswered != null) {
			answeredFirst(firstAnswered);
		}
		Current known = this.current;
		List<Map.Entry<HostAndPort, Integer>> ranked = new ArrayList<>(votes.entrySet());
		ranked.sort(Map.Entry.<HostAndPort, Integer>comparingByValue().reversed());
		boolean knownHolds = known != null && !ranked.isEmpty() && !ranked.get(0).getKey().equals(known.address())
				&& isMaster(known.address(), timeoutMillis);
		for (Map.Entry<HostAndPort, Integer> candidate : ranked) {
			HostAndPort named = candidate.getKey();
			if (known != null && known.address().equals(named)) {
				return known;
			}
			if (knownHolds && candidate.getValue() * 2 <= answered) {
				failures.add(candidate.getValue() + " of " + answered + " sentinels named "
						+ SentinelGroup.format(named) + ", not a majority, while "
						+ SentinelGroup.format(known.address()) + " still says it is the master");
				break;
			}
			if (isMaster(named, timeoutMillis)) {
				return moveTo(named,
						"named by " + candidate.getValue() + " of " + answered + " sentinels that answered");
			}
			failures.add(SentinelGroup.format(named) + ", named by " + candidate.getValue()
					+ " sentinel(s), is not a master");
		}
		if (knownHolds) {
			logger.debug("Redlock voter {}: stays with {} [{}]", this.uri.redacted(),
					SentinelGroup.format(known.address()), String.join("; ", failures));
			return known;
		}
		String message = this.uri.redacted() + ": no sentinel named a master [" + String.join("; ", failures) + "]";
		if (answered > 0 && unknown == answered && answered == this.sentinels.size()) {
			throw new SentinelMasterUnknownException(message);
		}
		throw new JedisConnectionException(message);
	}

	/**
	 * Asks the cluster's nodes, the primary known first, which primary serves the shard
	 * now, and moves there once it says it is a master. A node whose map is out of date
	 * may name a former primary: that one says it is a replica now, and the next node is
	 * asked.
	 */
	private Current resolveShard(ClusterShard shard, int timeoutMillis) {
		Current known = this.current;
		List<HostAndPort> asked = new ArrayList<>();
		if (known != null) {
			asked.add(known.address());
		}
		this.clusterNodes.stream().filter((node) -> !asked.contains(node)).forEach(asked::add);
		List<String> failures = new ArrayList<>();
		for (HostAndPort node : asked) {
			if (this.closed) {
				throw new JedisConnectionException("Redlock has been closed");
			}
			ClusterSlots slots;
			try {
				slots = readSlots(node, timeoutMillis);
			}
			catch (RuntimeException ex) {
				failures.add(SentinelGroup.format(node) + ": " + ex.getMessage());
				continue;
			}
			ClusterSlots.Shard serving = shard.followedIn(slots, (known != null) ? known.address() : null,
					shard::serves);
			if (serving == null) {
				failures.add(SentinelGroup.format(node) + ((known == null && shard.provisional())
						? " tells fewer than " + (shard.index() + 1) + " shards"
						: " names no primary for the slots " + shard.slotText()));
				continue;
			}
			Current followed = followTo(serving.primary(), "in the slot map of " + SentinelGroup.format(node),
					timeoutMillis);
			if (followed != null) {
				return followed;
			}
			failures.add(SentinelGroup.format(serving.primary()) + ", named by " + SentinelGroup.format(node)
					+ ", is not a master");
		}
		throw new JedisConnectionException(this.uri.redacted() + ": no cluster node named the shard's primary ["
				+ String.join("; ", failures) + "]");
	}

	/**
	 * Reads a cluster's slot map from one of its nodes, and remembers the nodes it names:
	 * this shard's first, then the others, then the seeds, to ask next time.
	 */
	ClusterSlots readSlots(HostAndPort node, int timeoutMillis) {
		ClusterSlots slots = ClusterSlots.readFrom(node,
				this.uri.clientConfig(timeoutMillis, this.clientName, this.tls));
		Current known = this.current;
		ClusterShard shard = this.uri.cluster();
		ClusterSlots.Shard own = shard.followedIn(slots, (known != null) ? known.address() : null, shard::serves);
		List<HostAndPort> nodes = new ArrayList<>();
		if (own != null) {
			nodes.add(own.primary());
			nodes.addAll(own.replicas());
		}
		for (ClusterSlots.Shard other : slots.shards()) {
			nodes.add(other.primary());
			nodes.addAll(other.replicas());
		}
		nodes.addAll(shard.seeds());
		this.clusterNodes = nodes.stream().distinct().toList();
		return slots;
	}

	/**
	 * Moves a cluster shard to the primary a slot map names, once it says it is a master.
	 * @param primary the primary named
	 * @param how where it was named, for the log
	 * @return where the shard's primary is now, or {@code null} when the server named
	 * does not say it is a master (the shard stays where it was)
	 */
	@Nullable Current followTo(HostAndPort primary, String how, int timeoutMillis) {
		Current known = this.current;
		if (known != null && known.address().equals(primary)) {
			return known;
		}
		return isMaster(primary, timeoutMillis) ? moveTo(primary, "the primary of its slots " + how) : null;
	}

	private Current moveTo(HostAndPort address, String how) {
		HostAndPort previous;
		Current moved;
		synchronized (this) {
			Current known = this.current;
			if (known != null && known.address().equals(address)) {
				return known;
			}
			previous = this.lastAddress;
			moved = new Current(address, ++this.lastGeneration);
			this.lastAddress = address;
			this.current = moved;
		}
		if (previous == null || previous.equals(address)) {
			logger.debug("Redlock voter {}: master at {} ({})", this.uri.redacted(), SentinelGroup.format(address),
					how);
			return moved;
		}
		logger.warn(
				"Redlock voter {}: master moved from {} to {} ({}); the voter counts again once the new "
						+ "master's quarantine has passed",
				this.uri.redacted(), SentinelGroup.format(previous), SentinelGroup.format(address), how);
		if (this.closed) {
			return moved;
		}
		try {
			// outside the lock: closing the former master's connections must not hold up
			// a connection attempt
			this.moved.run();
		}
		catch (Throwable ex) {
			logger.warn("Redlock voter {}: closing the connections to the former master failed", this.uri.redacted(),
					ex);
		}
		return moved;
	}

	/** Stops asking the sentinels: a resolution under way gives up at its next one. */
	void close() {
		this.closed = true;
		this.queries.close();
	}

	/**
	 * Forgets the master known, if it is still the given generation's: the next
	 * connection asks the sentinels again.
	 */
	private synchronized void forget(int generation) {
		Current known = this.current;
		if (known != null && known.generation() == generation) {
			this.current = null;
		}
	}

	private void answeredFirst(HostAndPort sentinel) {
		List<HostAndPort> order = this.sentinels;
		if (!order.isEmpty() && order.get(0).equals(sentinel)) {
			return;
		}
		List<HostAndPort> reordered = new ArrayList<>(order.size());
		reordered.add(sentinel);
		order.stream().filter((s) -> !s.equals(sentinel)).forEach(reordered::add);
		this.sentinels = List.copyOf(reordered);
	}

	/**
	 * How to connect to the sentinels: without credentials, until one wanted a password;
	 * then with the voter's user and password.
	 */
	DefaultJedisClientConfig sentinelConfig(int timeoutMillis) {
		return this.uri.sentinelClientConfig(timeoutMillis, this.clientName, this.tls, this.sentinelsWantCredentials);
	}

	private @Nullable HostAndPort askSentinel(HostAndPort sentinel, String masterName, int timeoutMillis) {
		try {
			return ask(sentinel, masterName, timeoutMillis);
		}
		catch (JedisDataException ex) {
			boolean noAuth = String.valueOf(ex.getMessage()).startsWith("NOAUTH");
			if (!noAuth || this.sentinelsWantCredentials || this.uri.password() == null) {
				throw ex;
			}
			this.sentinelsWantCredentials = true;
			this.queries.forgetConnections();
			return ask(sentinel, masterName, timeoutMillis);
		}
	}

	private @Nullable HostAndPort ask(HostAndPort sentinel, String masterName, int timeoutMillis) {
		return this.queries.masterAddress(sentinel, masterName, () -> sentinelConfig(timeoutMillis));
	}

	private boolean isMaster(HostAndPort address, int timeoutMillis) {
		try {
			PipelinedConnection connection;
			try {
				connection = new PipelinedConnection(address,
						this.uri.clientConfig(timeoutMillis, this.clientName, this.tls));
			}
			catch (JedisDataException ex) {
				throw new AuthenticationFailedException("authentication failed: " + ex.getMessage(), ex);
			}
			try {
				String role = role(connection);
				return role == null || role.equals("master");
			}
			finally {
				connection.closeQuietly();
			}
		}
		catch (AuthenticationFailedException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			logger.debug("Redlock voter {}: {} not checked: {}", this.uri.redacted(), SentinelGroup.format(address),
					ex.toString());
			return false;
		}
	}

	/**
	 * Returns why the master refused {@code ROLE}, when it did (an ACL user without
	 * {@code +role}): its connections are then taken as they are, replica or not.
	 * @return the refusal, or {@code null}
	 */
	@Nullable String roleRefusal() {
		return this.roleRefusal.get();
	}

	/**
	 * The server's role, or {@code null} when it refuses {@code ROLE}: the first refusal
	 * is logged and kept for the startup check.
	 */
	private @Nullable String role(PipelinedConnection connection) {
		connection.send(new CommandArguments(Command.ROLE));
		connection.flushNow();
		try {
			Object reply = connection.readReply();
			if (reply instanceof List<?> parts && !parts.isEmpty() && parts.get(0) instanceof byte[] role) {
				return Arrays.equals(role, MASTER) ? "master" : new String(role, StandardCharsets.UTF_8);
			}
			return null;
		}
		catch (JedisDataException ex) {
			if (this.roleRefusal.compareAndSet(null, String.valueOf(ex.getMessage()))) {
				logger.warn(
						"Redlock voter {}: {} refuses ROLE ({}): a connection that lands on a replica after a "
								+ "failover is taken as one to the master; grant the user +role",
						this.uri.redacted(), SentinelGroup.format(connection.address()), ex.getMessage());
			}
			return null;
		}
	}

}
