package dev.redlock.core;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.Test;

import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * A frozen node keeps its TCP connections open: its kernel accepts data until its buffers
 * fill, then the sender's writes block, with no timeout of their own. Waiting for a lock
 * subscribes to the key's release channel on every node, and leaving unsubscribes: with a
 * node frozen and long keys, those commands fill the subscription connection's buffers.
 * No call may then be held past its bound, nor {@code close()}.
 */
@WithRedisNodes(count = 3)
class FrozenSubscriberTests {

	private static final Duration NODE_TIMEOUT = Duration.ofMillis(200);

	private static final Duration WAIT = Duration.ofMillis(1);

	/** More subscription traffic than a frozen node's socket buffers take. */
	private static final int ROUNDS = 6_000;

	@Test
	void aFrozenNodeHoldsNoCallerPastItsBoundNorClose(RedisNodes nodes) throws Exception {
		RedlockSettings settings = TestSupport.SETTINGS.withNodeTimeout(NODE_TIMEOUT);
		String resource = "frozen-" + "x".repeat(1_000);
		ExecutorService caller = Executors.newSingleThreadExecutor();
		Redlock waiter = TestSupport.redlock(nodes, settings);
		try (Redlock holder = TestSupport.redlock(nodes, settings)) {
			Lease held = holder.acquire(resource, Duration.ofMinutes(1), Duration.ZERO);
			// the subscription connections are open before the freeze: a thread waits
			// until node 0 shows a subscriber
			Future<?> waiting = caller.submit(() -> {
				try {
					waiter.acquire(resource, Duration.ofSeconds(10), Duration.ofSeconds(30)).release();
				}
				catch (LockNotAcquiredException ex) {
					// the wait ends when the lock is released below
				}
			});
			TestSupport.awaitTrue("node 0 has a subscriber", Duration.ofSeconds(10),
					() -> nodes.node(0).command("CLIENT", "LIST").contains("sub=1"));
			held.release();
			waiting.get(10, TimeUnit.SECONDS);
			held = holder.acquire(resource, Duration.ofMinutes(1), Duration.ofSeconds(10));
			nodes.node(0).pause();
			try {
				// each call: an attempt, a wait in the queue, at most two node timeouts
				// of clean-up; the slack is for a loaded machine
				Duration bound = WAIT.plus(NODE_TIMEOUT.multipliedBy(3)).plusSeconds(2);
				long start = System.nanoTime();
				for (int i = 0; i < ROUNDS; i++) {
					Future<?> call = caller.submit(() -> waitOnce(waiter, resource));
					try {
						call.get(bound.toMillis(), TimeUnit.MILLISECONDS);
					}
					catch (TimeoutException ex) {
						fail("call %d held for more than %d ms by the frozen node", i, bound.toMillis());
					}
				}
				System.out.printf("[frozen subscriber] %d waits on a %d-byte key in %d ms with a node frozen%n", ROUNDS,
						resource.length(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
				Future<?> closing = caller.submit(waiter::close);
				try {
					closing.get(NODE_TIMEOUT.multipliedBy(2).plusSeconds(2).toMillis(), TimeUnit.MILLISECONDS);
				}
				catch (TimeoutException ex) {
					fail("close() held by the frozen node");
				}
				assertThat(waiter.isClosed()).isTrue();
			}
			finally {
				nodes.node(0).resume();
			}
			held.release();
		}
		finally {
			caller.shutdownNow();
			waiter.close();
		}
	}

	/**
	 * One contended attempt, a short wait in the queue, and out: subscribe, unsubscribe.
	 */
	private static void waitOnce(Redlock waiter, String resource) {
		try {
			waiter.acquire(resource, Duration.ofSeconds(10), WAIT).release();
			fail("the lock is held: no call may get it");
		}
		catch (LockNotAcquiredException ex) {
			// contended, as expected
		}
	}

}
