package dev.redlock.metrics;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

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

/**
 * The {@code redlock.node.requests} tags of nodes that fail, on real nodes, as this
 * class's own Redlock sees them.
 */
@WithRedisNodes(count = 3)
class RedlockMetricsListenerNodeFaultTests {

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	@Test
	void killedNodeIsTaggedError(RedisNodes nodes) {
		try (Redlock redlock = warmedUp(nodes)) {
			RedisNode killed = nodes.node(0);
			// the warm-up's round may have returned before a node's first connection
			// came: count from here
			long acquiredBefore = count(nodes.node(1), "acquire", "ok");
			long releasedBefore = count(nodes.node(1), "release", "ok");
			killed.kill();
			acquireAndRelease(redlock, "order:1");
			assertThat(count(killed, "acquire", "error")).isPositive();
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
			}
			finally {
				paused.resume();
			}
			// the round returned once the other two had answered: the paused node's
			// timeout is reported by its
			// late-reply thread, a node timeout after the write
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
			while (count(paused, "acquire", "timeout") == 0 && System.nanoTime() - deadline < 0) {
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
			}
			assertThat(count(paused, "acquire", "timeout")).isEqualTo(1);
			assertThat(count(paused, "acquire", "error")).isZero();
			Timer timer = this.meters.get("redlock.node.requests")
				.tags("node", address(paused), "command", "acquire", "outcome", "timeout")
				.timer();
			assertThat(timer.max(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(50);
			assertThat(count(nodes.node(0), "acquire", "ok")).isEqualTo(acquiredBefore + 1);
		}
	}

	/**
	 * A Redlock that records into {@link #meters} and has acquired and released once, so
	 * that it is connected to every node.
	 */
	private Redlock warmedUp(RedisNodes nodes) {
		Redlock redlock = Redlock.builder()
			.nodes(nodes.uris())
			.settings(RedlockSettings.defaults().withRestartQuarantine(Duration.ZERO))
			.listener(new RedlockMetricsListener(this.meters))
			.build();
		acquireAndRelease(redlock, "warm-up");
		return redlock;
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
