package dev.redlock.benchmarks;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.function.Function;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.Protocol.Keyword;

/**
 * The least work a Redlock lock+unlock can be: the floor's parallel round with
 * {@code SET key value NX PX ttl}, then a second one with the specification's
 * compare-and-delete script by {@code EVALSHA}. One connection per node per thread, nodes
 * read in list order, no pool, no timeouts, no bookkeeping, no release notice, a value
 * from {@link LockUnlock#cheapValue()}: not a usable client, but what any client's
 * lock+unlock costs the machine at the least, beside the floor's single {@code SET}.
 */
@State(Scope.Thread)
public class IdealRedlock {

	private static final byte[] OK = "OK".getBytes(StandardCharsets.US_ASCII);

	private RawConnection[] connections;

	private String releaseSha;

	/** {@link #round}, made once: a method reference per call would allocate. */
	private final Function<CommandArguments, Object[]> rounds = this::round;

	@Setup(Level.Trial)
	public void connect(RedisCluster cluster) {
		this.connections = JedisEndpoints.connectAll(cluster.uris(), RawConnection::new, RawConnection[]::new);
		for (RawConnection connection : this.connections) {
			connection.sendCommand(new CommandArguments(Command.SCRIPT).add("LOAD").add(NaiveRedlock.RELEASE));
			connection.flushNow();
			this.releaseSha = new String((byte[]) connection.getUnflushedObject(), StandardCharsets.US_ASCII);
		}
	}

	@TearDown(Level.Trial)
	public void close() {
		JedisEndpoints.closeAll(this.connections);
	}

	/**
	 * Locks on every node and unlocks.
	 * @param key a fresh key
	 * @param ttlMillis the lock's TTL
	 * @return whether a majority granted the lock
	 */
	public boolean lockUnlock(String key, long ttlMillis) {
		return lockUnlock(this.rounds, this.releaseSha, key, ttlMillis);
	}

	/**
	 * The two rounds of a lock+unlock, however a round reaches the nodes.
	 * @param round writes a command to every node and returns every reply
	 * @param releaseSha the digest of the compare-and-delete script
	 * @param key a fresh key
	 * @param ttlMillis the lock's TTL
	 * @return whether a majority granted the lock
	 */
	static boolean lockUnlock(Function<CommandArguments, Object[]> round, String releaseSha, String key,
			long ttlMillis) {
		String value = LockUnlock.cheapValue();
		Object[] replies = round.apply(
				new CommandArguments(Command.SET).key(key).add(value).add(Keyword.NX).add(Keyword.PX).add(ttlMillis));
		int granted = 0;
		for (Object reply : replies) {
			if (reply instanceof byte[] status && Arrays.equals(status, OK)) {
				granted++;
			}
		}
		round.apply(new CommandArguments(Command.EVALSHA).add(releaseSha).add(1).key(key).add(value));
		return granted > replies.length / 2;
	}

	/** Writes the command to every node, then reads every reply. */
	private Object[] round(CommandArguments command) {
		for (RawConnection connection : this.connections) {
			connection.sendCommand(command);
			connection.flushNow();
		}
		Object[] replies = new Object[this.connections.length];
		for (int i = 0; i < replies.length; i++) {
			replies[i] = this.connections[i].getUnflushedObject();
		}
		return replies;
	}

}
