package dev.redlock.metrics;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import dev.redlock.core.LockRequest;
import dev.redlock.core.Lease;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockSettings;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The {@code redlock.node.requests} tags of nodes that fail, on real nodes, as this
 * class's own Redlock sees them.
 */
@WithRedisNodes(count = 3)
class RedlockMetricsListenerNodeFaultTests {

	/**
	 * Long enough for healthy nodes to answer within it on a loaded machine, where one
	 * can be descheduled for hundreds of milliseconds.
	 */
	private static final Duration NODE_TIMEOUT = Duration.ofSeconds(1);

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	@Test
	void killedNodeIsTaggedError(RedisNodes nodes) {
		try (Redlock redlock = warmedUp(nodes)) {
			RedisNode killed = nodes.node(0);
			// count from here: every reply of the warm-up is in
			long acquiredBefore = count(nodes.node(1), "acquire", "ok");
			long releasedBefore = count(nodes.node(1), "release", "ok");
			killed.kill();
			acquireAndRelease(redlock, "order:1");
			// the round may have returned on the other two before the killed node's
			// failure was read
			await("the killed node's error", () -> count(killed, "acquire", "error") > 0);
			assertThat(count(killed, "acquire", "timeout")).isZero();
			// with one node of three down, both others make the quorum: read in the round
			assertThat(count(nodes.node(1), "acquire", "ok")).isEqualTo(acquiredBefore + 1);
			assertThat(count(nodes.node(1), "release", "ok")).isEqualTo(releasedBefore + 1);
		}
	}

	@Test
	void pausedNodeIsTaggedTimeout(RedisNodes nodes) {
		try (Redlock redlock = warmedUp(nodes)) {
			RedisNode paused = nodes.node(1);
			long acquiredBefore = count(nodes.node(0), "acquire", "ok");
			paused.pause();
			try {
				acquireAndRelease(redlock, "order:2");
				// the round returned once the other two had answered: the paused node's
				// timeout is reported by its late-reply thread, a node timeout after the
				// write; the node stays frozen until then, so its reply cannot be in time
				await("the paused node's timeout", () -> count(paused, "acquire", "timeout") > 0);
			}
			finally {
				paused.resume();
			}
			assertThat(count(paused, "acquire", "timeout")).isEqualTo(1);
			assertThat(count(paused, "acquire", "error")).isZero();
			Timer timer = this.meters.get("redlock.node.requests")
				.tags("node", address(paused), "command", "acquire", "outcome", "timeout")
				.timer();
			// a node timeout, not a failure found at once
			assertThat(timer.max(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(NODE_TIMEOUT.toMillis() / 2);
			assertThat(count(nodes.node(0), "acquire", "ok")).isEqualTo(acquiredBefore + 1);
		}
	}

	/**
	 * A Redlock that records into {@link #meters}, is connected to every node, and has
	 * acquired and released once on every node, each reply counted: the counts read
	 * before a fault do not change after.
	 */
	private Redlock warmedUp(RedisNodes nodes) {
		Redlock redlock = Redlock.builder()
			.nodes(nodes.uris())
			.settings(RedlockSettings.defaults().withRestartQuarantine(Duration.ZERO).withNodeTimeout(NODE_TIMEOUT))
			.listener(new RedlockMetricsListener(this.meters))
			.build();
		// a round writes to the nodes that have a connection when it starts: a node whose
		// first connection came later would never see the warm-up (and a paused node with
		// no connection would never see the test's request, nor time out)
		await("a connection to every node",
				() -> redlock.checkNodes().stream().allMatch((status) -> status.reachable()));
		acquireAndRelease(redlock, "warm-up");
		// the round returns on a quorum: the last node's replies are counted later
		for (RedisNode node : nodes.nodes()) {
			await("the warm-up's replies from " + address(node),
					() -> count(node, "acquire", "ok") == 1 && count(node, "release", "ok") == 1);
		}
		return redlock;
	}

	private static void await(String what, BooleanSupplier condition) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() - deadline > 0) {
				fail("not within 5 s: " + what);
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
		}
	}

	private static void acquireAndRelease(Redlock redlock, String resource) {
		try (Lease lease = redlock.acquire(LockRequest.of(resource, Duration.ofSeconds(10)).named("orders"),
				Duration.ZERO)) {
			assertThat(lease.isValid()).isTrue();
		}
	}

	private long count(RedisNode node, String command, String outcome) {
		Timer timer = this.meters.find("redlock.node.requests")
			.tags("node", address(node), "command", command, "outcome", outcome)
			.timer();
		return (timer != null) ? timer.count() : 0;
	}

	private static String address(RedisNode node) {
		return node.host() + ":" + node.port();
	}

}
