package dev.redlock.benchmarks;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.params.SetParams;

/**
 * The textbook Redlock as a straightforward Jedis client would write it:
 * {@code SET NX PX} on node 1, then node 2, and so on; held if a majority said OK and
 * validity remains; released by a compare-and-delete script on each node in turn. One
 * connection per node per thread.
 */
@State(Scope.Thread)
public class NaiveRedlock {

	/** The specification's compare-and-delete. */
	static final String RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then "
			+ "return redis.call('del', KEYS[1]) else return 0 end";

	private Jedis[] nodes;

	private String releaseSha;

	private int quorum;

	@Setup(Level.Trial)
	public void connect(RedisCluster cluster) {
		this.nodes = JedisEndpoints.connectAll(cluster.uris(), Jedis::new, Jedis[]::new);
		for (Jedis node : this.nodes) {
			this.releaseSha = node.scriptLoad(RELEASE);
		}
		this.quorum = this.nodes.length / 2 + 1;
	}

	@TearDown(Level.Trial)
	public void close() {
		JedisEndpoints.closeAll(this.nodes);
	}

	/**
	 * One attempt, without retrying.
	 * @param key the lock's key
	 * @param ttlMillis the lock's TTL
	 * @return the lock's value if held, else {@code null}
	 */
	public String tryLock(String key, long ttlMillis) {
		String value = LockUnlock.cheapValue();
		long start = System.nanoTime();
		int granted = 0;
		SetParams params = SetParams.setParams().nx().px(ttlMillis);
		for (Jedis node : this.nodes) {
			try {
				if ("OK".equals(node.set(key, value, params))) {
					granted++;
				}
			}
			catch (JedisException ex) {
				// counts as not granted
			}
		}
		long elapsedMillis = (System.nanoTime() - start) / 1_000_000;
		long drift = (long) (ttlMillis * 0.01) + 2;
		if (granted >= this.quorum && ttlMillis - elapsedMillis - drift > 0) {
			return value;
		}
		unlock(key, value);
		return null;
	}

	/**
	 * Deletes the key on each node in turn where it still holds the value.
	 * @param key the lock's key
	 * @param value the value {@link #tryLock} returned
	 */
	public void unlock(String key, String value) {
		for (Jedis node : this.nodes) {
			try {
				try {
					node.evalsha(this.releaseSha, 1, key, value);
				}
				catch (JedisNoScriptException ex) {
					node.eval(RELEASE, 1, key, value);
				}
			}
			catch (JedisException ex) {
				// that node's copy expires with the TTL
			}
		}
	}

}
