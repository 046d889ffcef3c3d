package dev.redlock.benchmarks;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.redisson.RedissonRedLock;

import dev.redlock.core.LockRequest;
import dev.redlock.core.Lease;

/**
 * The operations every scenario measures, each a lock and an unlock (or, for the floor,
 * one round trip).
 */
final class LockUnlock {

	static final long TTL_SECONDS = 10;

	static final Duration TTL = Duration.ofSeconds(TTL_SECONDS);

	static final long TTL_MILLIS = TTL.toMillis();

	static final String NAME = "bench";

	private LockUnlock() {
	}

	static Object floor(Floor floor, String key) {
		return floor.round(key);
	}

	/**
	 * @return whether the lock was held
	 */
	static boolean naive(NaiveRedlock naive, String key) {
		String value = naive.tryLock(key, TTL_MILLIS);
		if (value == null) {
			return false;
		}
		naive.unlock(key, value);
		return true;
	}

	/**
	 * @return whether the lock was held
	 */
	static boolean redisson(RedissonNodes redisson, String key) throws InterruptedException {
		RedissonRedLock lock = redisson.lock(key);
		if (!lock.tryLock(0, TTL_MILLIS, TimeUnit.MILLISECONDS)) {
			return false;
		}
		lock.unlock();
		return true;
	}

	/**
	 * @return whether the lock was held
	 */
	static boolean redlock(OurRedlock ours, String key) {
		Lease lease = ours.redlock.tryAcquire(LockRequest.of(key, TTL).named(NAME)).orElse(null);
		if (lease == null) {
			return false;
		}
		return lease.release() != null;
	}

	/**
	 * @return whether a fenced lock was held with its token
	 */
	static boolean fenced(OurRedlock ours, String key) {
		Lease lease = ours.redlock.tryAcquire(LockRequest.of(key, TTL).named(NAME).fenced()).orElse(null);
		if (lease == null) {
			return false;
		}
		boolean token = lease.fencingToken().isPresent();
		return lease.release() != null && token;
	}

	/**
	 * A lock value for the hand-written clients: unique enough for a benchmark, and
	 * cheap.
	 */
	static String cheapValue() {
		return Long.toHexString(ThreadLocalRandom.current().nextLong())
				+ Long.toHexString(ThreadLocalRandom.current().nextLong());
	}

	/**
	 * A fresh key must always be granted: a refusal means the benchmark measures
	 * something else.
	 */
	static void mustHold(boolean held, String who) {
		if (!held) {
			throw new IllegalStateException(who + " did not acquire a fresh key");
		}
	}

}
