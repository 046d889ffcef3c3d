package dev.redlock.core;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import dev.redlock.core.RedlockListener.NodeRequestEvent;
import dev.redlock.core.internal.AcquireAttempt;
import dev.redlock.core.internal.round.NodeReply;
import dev.redlock.core.internal.thread.OnDemandThread;
import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A reply is only ever read by the round that sent its command: a connection that still
 * owes a reply is never reused, whatever left it so, and a reply counts as a grant only
 * if it answers the command that was sent.
 */
@WithRedisNodes(count = 3)
class StaleReplyTests {

	private static final Duration TTL = Duration.ofSeconds(10);

	/**
	 * A round lost to a busy key hands the slow node over to the late-reply thread, with
	 * the release right behind the {@code SET}. A listener that throws an {@link Error}
	 * on that late reply must not send the connection back to its pool with the release's
	 * reply unread: the next command on it would read that {@code :1} as its own answer.
	 * Here that command is an extension of a lease the other nodes no longer hold, and a
	 * {@code :1} is just what confirms an extension: read as node 2's, it would make a
	 * quorum with node 1 and keep alive a lease that is lost.
	 */
	@Test
	void aListenerErrorOnALateReplyNeverLetsAStaleReplyAnswerTheNextCommand(RedisNodes nodes) {
		AtomicBoolean armed = new AtomicBoolean();
		AtomicReference<String> failedOn = new AtomicReference<>();
		try (LatencyProxy slow = LatencyProxy.to(nodes.node(2), Duration.ZERO)) {
			String slowNode = slow.host() + ":" + slow.port();
			RedlockListener failing = new RedlockListener() {

				@Override
				public void nodeRequestFinished(NodeRequestEvent event) {
					if (armed.get() && event.node().equals(slowNode)) {
						failedOn.set(Thread.currentThread().getName());
						armed.set(false);
						throw new AssertionError("a listener's bug");
					}
				}

			};
			List<String> uris = List.of(nodes.node(0).uri(), nodes.node(1).uri(), slow.uri());
			// the pooled transport, whose connections go back to a pool (a shared
			// connection's replies are read by its reader alone, and late replies reach
			// the listeners on another thread)
			RedlockSettings settings = TestSupport.SETTINGS.toBuilder()
				.poolMaxTotal(4)
				.poolMaxIdle(1)
				.nodeTimeout(Duration.ofSeconds(1))
				.transport(RedlockSettings.Transport.POOLED)
				.build();
			try (Redlock redlock = Redlock.builder().nodes(uris).settings(settings).listener(failing).build()) {
				// one connection per node, opened while the proxy is fast
				redlock.acquire("warm-up", TTL, Duration.ZERO).release();
				slow.delay(Duration.ofMillis(30));
				// waited for in full once: from now on the slow node is known to lag
				redlock.acquire("measured", TTL, Duration.ZERO).release();
				// each round below needs the slow node's only connection idle, or it
				// never writes to that node; and no late reply of an earlier round may
				// reach the listener once it is armed
				awaitIdle(redlock);
				Lease lease = redlock.acquire("k", TTL, Duration.ZERO);
				awaitIdle(redlock);
				assertThat(nodes.node(2).command("GET", "redlock:k")).as("node 2 granted the lease").isNotNull();

				nodes.node(0).command("SET", "redlock:busy", "someone-else", "PX", "10000");
				nodes.node(1).command("SET", "redlock:busy", "someone-else", "PX", "10000");
				// a busy machine may settle the round so late that node 2's reply is read
				// on the caller's thread, where no release waits behind it: tried again
				// until the listener fails on the late-reply thread
				int attempts = 0;
				do {
					attempts++;
					awaitIdle(redlock);
					armed.set(true);
					assertThat(redlock.tryAcquire("busy", TTL)).isEmpty();
					// the listener's failure is counted after it threw: waited for, not
					// read as soon as the flag flipped
					int failures = attempts;
					TestSupport.awaitTrue(
							"node 2's reply was read, the listener's failure counted, and the connection "
									+ "given back or closed",
							Duration.ofSeconds(10), () -> !armed.get() && redlock.listenerFailures() == failures
									&& redlock.internals().connectionsInUse(2) == 0);
				}
				while (!failedOn.get().startsWith(OnDemandThread.LATE_REPLIES) && attempts < 5);
				assertThat(failedOn.get()).as("the thread the listener failed on")
					.startsWith(OnDemandThread.LATE_REPLIES);
				assertThat(nodes.node(2).command("GET", "redlock:busy")).as("the lost round's value on node 2")
					.isNull();

				// the lease is left on node 1 alone: no quorum can extend it
				nodes.node(0).command("DEL", "redlock:k");
				nodes.node(2).command("DEL", "redlock:k");
				assertThat(lease.extend()).as("an extension that only node 1 confirms").isFalse();
				assertThat(lease.extensionAttempts()).as("extensions that reached the nodes").isEqualTo(1);
				assertThat(lease.isLost()).isTrue();
			}
		}
	}

	private static void awaitIdle(Redlock redlock) {
		TestSupport.awaitTrue("the slow node's connection is idle again", Duration.ofSeconds(10),
				() -> redlock.internals().idleConnections(2) == 1 && redlock.internals().connectionsInUse(2) == 0);
	}

	@Test
	void aReplyIsAGrantOnlyIfItAnswersTheCommandSent() {
		NodeReply granted = NodeReply.replied(0, acquireReply(1), 1);
		NodeReply taken = NodeReply.replied(0, acquireReply(0), 1);
		NodeReply counter = NodeReply.replied(0, acquireReply(7), 1);
		NodeReply one = NodeReply.replied(0, 1L, 1);
		NodeReply ok = NodeReply.replied(0, "OK".getBytes(), 1);
		NodeReply nil = NodeReply.replied(0, null, 1);
		assertThat(AcquireAttempt.isGrant(granted, false)).isTrue();
		assertThat(AcquireAttempt.isGrant(taken, false)).isFalse();
		assertThat(AcquireAttempt.isRefusal(taken)).isTrue();
		assertThat(AcquireAttempt.isGrant(counter, false)).as("a counter answers the fenced script, not the plain one")
			.isFalse();
		assertThat(AcquireAttempt.isGrant(one, false)).as("an integer never answers the acquisition script").isFalse();
		assertThat(AcquireAttempt.isGrant(ok, false)).as("a SET's OK answers a plain SET NX (no quarantine)").isTrue();
		assertThat(AcquireAttempt.isGrant(ok, true)).as("but never the fenced script").isFalse();
		assertThat(AcquireAttempt.isGrant(nil, false)).isFalse();
		assertThat(AcquireAttempt.isGrant(counter, true)).isTrue();
		assertThat(AcquireAttempt.isGrant(granted, true)).as("counters start at 1").isTrue();
		assertThat(AcquireAttempt.isGrant(taken, true)).isFalse();
		assertThat(AcquireAttempt.isGrant(one, true)).as("a release's 1 never answers the fenced script").isFalse();
		assertThat(AcquireAttempt.isGrant(nil, true)).isFalse();
		// a fenced acquisition's counting script (no quarantine)
		NodeReply firstToken = NodeReply.replied(0, Arrays.asList(1L, "value".getBytes()), 1);
		assertThat(AcquireAttempt.isGrant(firstToken, true)).isTrue();
		assertThat(AcquireAttempt.isGrant(firstToken, false)).as("a count never answers a plain SET NX").isFalse();
	}

	/** What the acquisition scripts answer: the grant, the node's clock, its marker. */
	private static List<Object> acquireReply(long grant) {
		return List.of(grant, "1795685657".getBytes(), "727606".getBytes(), "0 clean 00 -".getBytes());
	}

}
