package dev.redlock.benchmarks;

import java.util.List;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.redisson.Redisson;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * One single-server {@link RedissonClient} per node, shared by all benchmark threads,
 * with default settings.
 */
@State(Scope.Benchmark)
public class RedissonNodes {

	private RedissonClient[] clients;

	@Setup(Level.Trial)
	public void connect(RedisCluster cluster) {
		List<String> uris = cluster.uris();
		this.clients = new RedissonClient[uris.size()];
		for (int i = 0; i < uris.size(); i++) {
			Config config = new Config();
			config.useSingleServer().setAddress(uris.get(i));
			this.clients[i] = Redisson.create(config);
		}
	}

	@TearDown(Level.Trial)
	public void close() {
		if (this.clients != null) {
			for (RedissonClient client : this.clients) {
				if (client != null) {
					client.shutdown();
				}
			}
		}
	}

	/**
	 * A Redisson RedLock over one lock per node, as its documentation builds it.
	 * @param key the lock's name
	 * @return the multi-node lock
	 */
	@SuppressWarnings("deprecation")
	public RedissonRedLock lock(String key) {
		RLock[] locks = new RLock[this.clients.length];
		for (int i = 0; i < locks.length; i++) {
			locks[i] = this.clients[i].getLock(key);
		}
		return new RedissonRedLock(locks);
	}

}
