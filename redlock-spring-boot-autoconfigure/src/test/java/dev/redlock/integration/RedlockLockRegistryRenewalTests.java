package dev.redlock.integration;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.redlock.TwoRedlocks;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@link RedlockLockRegistry#renewLock(Object)} on three real nodes: it sets the lease's
 * TTL on the nodes, only for the thread that holds the lock, and fails once the lease was
 * lost.
 */
@WithRedisNodes(count = 3)
class RedlockLockRegistryRenewalTests {

	private static final Duration TTL = Duration.ofSeconds(10);

	private RedisNodes nodes;

	@AutoClose
	private TwoRedlocks redlocks;

	private RedlockLockRegistry registry;

	@BeforeEach
	void start(RedisNodes nodes) {
		this.nodes = nodes;
		this.redlocks = TwoRedlocks.on(nodes);
		this.registry = new RedlockLockRegistry(this.redlocks.here(), TTL);
	}

	@Test
	void renewalSetsTheTtlOnTheNodes() {
		Lock lock = this.registry.obtain("report");
		lock.lock();
		try {
			assertThat(nodesWithPttlBetween("report", 1, TTL.toMillis())).as("acquired with the registry's TTL")
				.isGreaterThanOrEqualTo(2);
			this.registry.renewLock("report", Duration.ofSeconds(60));
			assertThat(nodesWithPttlBetween("report", 30_000, 60_000)).as("renewed to 60 s").isGreaterThanOrEqualTo(2);
			this.registry.renewLock("report");
			assertThat(nodesWithPttlBetween("report", 1, TTL.toMillis())).as("renewed by the registry's TTL")
				.isGreaterThanOrEqualTo(2);
		}
		finally {
			lock.unlock();
		}
	}

	@Test
	void onlyTheHoldingThreadMayRenew() throws Exception {
		assertThatIllegalStateException().as("no lock for the key").isThrownBy(() -> this.registry.renewLock("nobody"));
		Lock lock = this.registry.obtain("job");
		assertThatExceptionOfType(IllegalMonitorStateException.class).as("not locked")
			.isThrownBy(() -> this.registry.renewLock("job"));
		lock.lock();
		try {
			Throwable fromOtherThread = CompletableFuture.supplyAsync(() -> {
				try {
					this.registry.renewLock("job", Duration.ofSeconds(60));
					return null;
				}
				catch (RuntimeException ex) {
					return ex;
				}
			}).get(10, TimeUnit.SECONDS);
			assertThat(fromOtherThread).as("renewed from another thread")
				.isInstanceOf(IllegalMonitorStateException.class);
			assertThat(nodesWithPttlBetween("job", 1, TTL.toMillis())).as("left as it was").isGreaterThanOrEqualTo(2);
		}
		finally {
			lock.unlock();
		}
		assertThatExceptionOfType(IllegalMonitorStateException.class).as("unlocked")
			.isThrownBy(() -> this.registry.renewLock("job"));
	}

	@Test
	void renewingALostLeaseFailsAndTheLockIsNoLongerHeld() throws Exception {
		Lock lock = this.registry.obtain("leader");
		lock.lock();
		// the lease is lost behind the holder's back, and someone else takes the lock
		this.nodes.nodes().forEach((node) -> node.command("DEL", redisKey("leader")));
		Lock theirs = new RedlockLockRegistry(this.redlocks.elsewhere()).obtain("leader");
		assertThat(theirs.tryLock()).isTrue();
		assertThatIllegalStateException().isThrownBy(() -> this.registry.renewLock("leader"))
			.withMessageContaining("Could not renew");
		// as after a failed automatic renewal: locking again cannot take it afresh, and
		// the holder holds nothing any more
		assertThat(lock.tryLock()).isFalse();
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock);
		assertThat(CompletableFuture.supplyAsync(lock::tryLock).get(10, TimeUnit.SECONDS))
			.as("another thread, while the other process holds it")
			.isFalse();
		theirs.unlock();
		assertThat(lock.tryLock()).isTrue();
		lock.unlock();
		this.registry.expireUnusedOlderThan(0);
		assertThat(this.registry.size()).as("the holds dropped with the lost lease keep nothing").isZero();
	}

	private int nodesWithPttlBetween(String key, long min, long max) {
		int count = 0;
		for (RedisNode node : this.nodes.nodes()) {
			long pttl = Long.parseLong(node.command("PTTL", redisKey(key)));
			if (pttl >= min && pttl <= max) {
				count++;
			}
		}
		return count;
	}

	private static String redisKey(String key) {
		return "redlock:" + RedlockLockRegistry.RESOURCE_PREFIX + key;
	}

}
