package dev.redlock.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.ScriptRounds.ValueToRemove;
import dev.redlock.core.internal.ValueCleanup;
import dev.redlock.core.internal.protocol.RawArgument;
import dev.redlock.core.internal.round.Fanout;
import dev.redlock.core.internal.round.NodeReply;
import dev.redlock.core.internal.round.RoundCommand;
import dev.redlock.core.internal.thread.RenewalScheduler;
import dev.redlock.core.internal.transport.NodeConnectionPool;
import dev.redlock.core.internal.transport.PipelinedConnection;
import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.exceptions.JedisConnectionException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The late clean-up gets only what may be left, keeps up with a slow node and never waits
 * on itself: a release a slow node confirms leaves it nothing, the values waiting for a
 * node go to it many to a round trip, and a clean-up that finds every connection to its
 * node owing late replies lets its thread read them first, rather than wait for a
 * connection that only that thread can give back.
 */
@WithRedisNodes(count = 3)
class ValueCleanupTests {

	/** Far longer than either test needs once the clean-up works as it should. */
	private static final Duration PATIENCE = Duration.ofSeconds(5);

	/** How long after it is asked for a clean-up first runs, here: at once. */
	private static final long FIRST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	private static final Duration TTL = Duration.ofMinutes(1);

	private static final long ONE_MINUTE_NANOS = TimeUnit.MINUTES.toNanos(1);

	/**
	 * 200 values waiting for a node 200 ms away are gone within 5 s, where one round trip
	 * each would take 40 s; a value someone else holds now, and one that has expired by
	 * our count, are left alone.
	 */
	@Test
	void manyValuesWaitingForASlowNodeGoInFewRoundTrips(RedisNodes nodes) {
		RedisNode slowNode = nodes.node(0);
		int count = 200;
		for (int i = 0; i < count; i++) {
			slowNode.command("SET", "ours-" + i, "value-" + i);
		}
		slowNode.command("SET", "theirs", "their-value");
		slowNode.command("SET", "expired", "our-old-value");
		try (LatencyProxy proxy = LatencyProxy.to(slowNode, Duration.ofMillis(100))) {
			List<String> uris = List.of(proxy.uri(), nodes.node(1).uri(), nodes.node(2).uri());
			RedlockSettings settings = TestSupport.SETTINGS.toBuilder()
				.keyPrefix("")
				.nodeTimeout(Duration.ofSeconds(2))
				.build();
			try (Redlock redlock = Redlock.builder().nodes(uris).settings(settings).build();
					RenewalScheduler scheduler = new RenewalScheduler()) {
				ValueCleanup cleanup = cleanupOf(redlock, scheduler, Duration.ofSeconds(2));
				long now = System.nanoTime();
				for (int i = 0; i < count; i++) {
					cleanup.remove(0, RawArgument.of("ours-" + i), RawArgument.of("value-" + i),
							now + ONE_MINUTE_NANOS);
				}
				cleanup.remove(0, RawArgument.of("theirs"), RawArgument.of("our-value"), now + ONE_MINUTE_NANOS);
				cleanup.remove(0, RawArgument.of("expired"), RawArgument.of("our-old-value"), now - 1);

				TestSupport.awaitTrue("every value removed or given up", PATIENCE, () -> cleanup.queued() == 0);
				assertThat(TestSupport.keysOn(slowNode)).as("only the values not ours to remove left").isEqualTo(2);
				assertThat(slowNode.command("GET", "theirs")).isEqualTo("their-value");
				assertThat(slowNode.command("GET", "expired")).isEqualTo("our-old-value");
			}
		}
	}

	/**
	 * The node's only connection owes a late reply, read on the thread the clean-up runs
	 * on, after it: the clean-up lets that reply be read first and removes the value at
	 * once, where waiting for the connection would have held both up for the node timeout
	 * (10 s).
	 */
	@Test
	void aCleanUpDoesNotWaitForAConnectionOnlyItsOwnThreadCanGiveBack(RedisNodes nodes) throws Exception {
		RedisNode node = nodes.node(0);
		node.command("SET", "ours", "our-value");
		RedlockSettings settings = TestSupport.SETTINGS.toBuilder()
			.keyPrefix("")
			.nodeTimeout(Duration.ofSeconds(10))
			.build()
			.withPool(1, 1);
		try (Redlock redlock = Redlock.builder().nodes(nodes.uris()).settings(settings).build();
				RenewalScheduler scheduler = new RenewalScheduler()) {
			TestSupport.awaitWarmPools(redlock);
			NodeConnectionPool pool = redlock.internals().group().pools().get(0);
			ValueCleanup cleanup = cleanupOf(redlock, scheduler, settings.nodeTimeout());
			CountDownLatch holdingTheThread = new CountDownLatch(1);
			pool.readLate(() -> await(holdingTheThread), () -> {
			});
			cleanup.remove(0, RawArgument.of("ours"), RawArgument.of("our-value"),
					System.nanoTime() + ONE_MINUTE_NANOS);
			TestSupport.awaitTrue("the clean-up queued on the late-reply thread", PATIENCE,
					() -> pool.lateTasksQueued() == 1);
			// the only connection, written to and handed to the same thread, behind the
			// clean-up
			PipelinedConnection only = pool.borrow(1_000).join();
			RoundCommand ping = RoundCommand.of(new CommandArguments(Command.PING));
			ping.writeTo(only);
			only.flushNow();
			pool.readLate(() -> {
				try {
					ping.readFrom(only);
				}
				finally {
					pool.giveBack(only);
				}
			}, () -> pool.giveBack(only));

			holdingTheThread.countDown();
			TestSupport.awaitTrue("the value removed, and the node's answer read", PATIENCE,
					() -> TestSupport.keysOn(node) == 0 && cleanup.queued() == 0);
		}
	}

	/**
	 * A release that a slow node confirms, its reply read late like the acquisition's,
	 * leaves nothing to the late clean-up: the value was deleted there, and the
	 * {@code SET} came first. Only a release that found nothing to delete there would.
	 */
	@Test
	void aReleaseConfirmedLateLeavesNothingToCleanUp(RedisNodes nodes) {
		RedisNode slowNode = nodes.node(0);
		try (LatencyProxy proxy = LatencyProxy.to(slowNode, Duration.ZERO);
				Redlock redlock = slowFirstNode(proxy, nodes)) {
			Lease lease = redlock.acquire("confirmed-late", TTL, Duration.ZERO);
			// the SET lands before the release is sent, as it almost always does
			TestSupport.awaitTrue("the SET landed on the slow node", PATIENCE,
					() -> "1".equals(slowNode.command("EXISTS", "confirmed-late")));
			assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);

			TestSupport.awaitTrue("the slow node's late replies read", PATIENCE,
					() -> TestSupport.keysOnNodes(nodes) == 0 && redlock.internals().connectionsInUse(0) == 0);
			// a clean-up would wait its first pause, the node timeout (10 s), to run
			assertThat(redlock.footprint().queuedCleanups()).as("values left to the late clean-up").isZero();
		}
	}

	/**
	 * After a release, a value may remain where the node did not say (no reply, or an
	 * error), or where it found nothing to release while the acquisition's {@code SET},
	 * not waited for, may still come behind the release (sent on another connection,
	 * which the network may carry faster); not where the node confirmed the release, nor
	 * where the {@code SET}'s own reply was read before. Pure logic: which late reply
	 * comes first on a real network is not the test's to decide.
	 */
	@Test
	void aValueMayRemainWhereAReleaseFoundNothingBehindASetNotWaitedFor() {
		// node 0's SET was read in time, node 1's was left to its late-reply thread
		ValueToRemove ours = new ValueToRemove(RawArgument.of("k"), RawArgument.of("v"), 0, 0, 0b10);
		NodeReply noAnswer = NodeReply.failed(1, new JedisConnectionException("timed out"), 0);
		assertThat(ours.mayRemainAfter(noAnswer)).as("no answer").isTrue();
		assertThat(ours.mayRemainAfter(NodeReply.replied(1, 1L, 0))).as("confirmed, SET not waited for").isFalse();
		assertThat(ours.mayRemainAfter(NodeReply.replied(1, 0L, 0))).as("nothing found, SET not waited for").isTrue();
		assertThat(ours.mayRemainAfter(NodeReply.replied(0, 0L, 0))).as("nothing found, SET read in time").isFalse();
		assertThat(ours.mayRemainAfter(NodeReply.replied(0, 1L, 0))).as("confirmed, SET read in time").isFalse();
	}

	/**
	 * A Redlock whose first node is behind the proxy, made 500 ms slower each way once
	 * the pools are warm and measured as slow, so that no round waits for it; the node
	 * timeout (10 s) is also the late clean-up's first pause.
	 */
	private static Redlock slowFirstNode(LatencyProxy proxy, RedisNodes nodes) {
		List<String> uris = List.of(proxy.uri(), nodes.node(1).uri(), nodes.node(2).uri());
		RedlockSettings settings = TestSupport.SETTINGS.toBuilder()
			.keyPrefix("")
			.nodeTimeout(Duration.ofSeconds(10))
			.build();
		Redlock redlock = Redlock.builder().nodes(uris).settings(settings).build();
		TestSupport.awaitWarmPools(redlock);
		proxy.delay(Duration.ofMillis(500));
		redlock.acquire("measure", TTL, Duration.ZERO).release();
		TestSupport.awaitTrue("the slow node measured, and its replies read", PATIENCE,
				() -> redlock.internals().expectedLatencies().get(0) > 500
						&& redlock.internals().connectionsInUse(0) == 0 && TestSupport.keysOnNodes(nodes) == 0);
		return redlock;
	}

	/**
	 * A clean-up of the Redlock's nodes like its own, but with a first pause of 1 ms.
	 */
	private static ValueCleanup cleanupOf(Redlock redlock, RenewalScheduler scheduler, Duration nodeTimeout) {
		List<NodeConnectionPool> pools = redlock.internals().group().pools();
		return new ValueCleanup(new Fanout(pools, nodeTimeout.toNanos(), true), pools, scheduler, FIRST_PAUSE_NANOS);
	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
