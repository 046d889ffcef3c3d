package dev.redlock.core.internal.round;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.redlock.core.RedlockSettings;
import dev.redlock.core.TlsSettings;
import dev.redlock.core.internal.quarantine.NodeQuarantine;
import dev.redlock.core.internal.quarantine.QuarantineGreeting;
import dev.redlock.core.internal.transport.NodeConnectionPool;
import dev.redlock.core.internal.transport.RedisNodeUri;
import dev.redlock.core.internal.transport.RoundTimes;
import dev.redlock.core.internal.transport.WarmUp;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which node a round waits for first, from the latencies its nodes have shown: pure logic
 * over pools that never connect (their measurements are fed by hand).
 */
class ReadOrderTests {

	private static final long MICROS = TimeUnit.MICROSECONDS.toNanos(1);

	private static final long MILLIS = TimeUnit.MILLISECONDS.toNanos(1);

	private final List<NodeConnectionPool> pools = new ArrayList<>();

	@AfterEach
	void close() {
		this.pools.forEach(NodeConnectionPool::close);
	}

	@Test
	void nodesAsNearAreReadInTheOrderTheyWereWrittenTo() {
		// a busy client: node 0, read first, took the wait for a CPU into its figures
		NodeConnectionPool first = pool(50 * MICROS, 6 * MILLIS);
		NodeConnectionPool second = pool(400 * MICROS);
		assertThat(first.latency().expectedNanos()).isGreaterThan(second.latency().expectedNanos());
		assertThat(new Round(this.pools).expectedFirst(this.pools, owing(0, 1))).isZero();
	}

	@Test
	void aNearerNodeIsReadFirstWhereverItIsListed() {
		pool(1_500 * MICROS, 1_500 * MICROS);
		pool(300 * MICROS, 300 * MICROS);
		assertThat(new Round(this.pools).expectedFirst(this.pools, owing(0, 1))).isOne();
	}

	@Test
	void aNodeThatTurnedSlowIsNotWaitedForFirst() {
		// its quickest answers are still near, its latest are 40 ms
		pool(50 * MICROS, 40 * MILLIS);
		pool(60 * MICROS);
		assertThat(new Round(this.pools).expectedFirst(this.pools, owing(0, 1))).isOne();
	}

	@Test
	void aReplyFoundWaitingMayLowerTheEstimateButNeverRaiseIt() {
		NodeConnectionPool fast = pool(500 * MICROS);
		// read after a round waited 1.5 s for another node: its age is not its latency
		fast.latency().replied(1_500 * MILLIS, true);
		assertThat(fast.latency().expectedNanos()).isEqualTo(500 * MICROS);
		assertThat(new Round(this.pools).expectedFirst(this.pools, owing(0))).isZero();
		// a node that was slow and answered within less: faster than it was thought
		NodeConnectionPool recovered = pool(1_500 * MILLIS);
		recovered.latency().replied(100 * MILLIS, true);
		assertThat(recovered.latency().expectedNanos()).isEqualTo(800 * MILLIS);
		assertThat(WriteTimes.slowThreshold(this.pools)).isLessThan(recovered.latency().expectedNanos());
		assertThat(new Round(this.pools).expectedFirst(this.pools, owing(0, 1))).isZero();
	}

	@Test
	void onlyNodesThatStillOweAReplyCount() {
		pool(50 * MICROS);
		pool(50 * MICROS);
		pool(50 * MICROS);
		assertThat(new Round(this.pools).expectedFirst(this.pools, owing(2))).isEqualTo(2);
		assertThat(new Round(this.pools).expectedFirst(this.pools, owing())).isEqualTo(-1);
	}

	@Test
	void aReplyIsLateOnlyAScheduleDelayAfterItWasDue() {
		long latency = TimeUnit.SECONDS.toNanos(1);
		pool(latency);
		Round justWritten = new Round(this.pools);
		assertThat(WriteTimes.isLate(justWritten.dueAt(this.pools, 0))).isFalse();
		// written long enough ago for the latency and the slack to be over
		Round writtenEarlier = new Round(this.pools, justWritten.start - latency - RoundTimes.LAG_SLACK_NANOS);
		assertThat(writtenEarlier.dueAt(this.pools, 0)).isEqualTo(justWritten.start - RoundTimes.LAG_SLACK_NANOS);
		assertThat(WriteTimes.isLate(writtenEarlier.dueAt(this.pools, 0))).isTrue();
	}

	/** A pool for a node nothing listens on, which has answered in the given times. */
	private NodeConnectionPool pool(long... replies) {
		RedisNodeUri uri = RedisNodeUri.parse("redis://127.0.0.1:1");
		RedlockSettings settings = RedlockSettings.defaults().toBuilder().poolMinIdle(0).build();
		NodeConnectionPool pool = new NodeConnectionPool(uri, settings, TimeUnit.SECONDS.toNanos(1),
				new QuarantineGreeting(new NodeQuarantine(uri, Duration.ZERO)), TlsSettings.jvmDefault(),
				WarmUp.none());
		for (long nanos : replies) {
			pool.latency().replied(nanos, false);
		}
		this.pools.add(pool);
		return pool;
	}

	private Object[] owing(int... nodes) {
		Object[] owing = new Object[this.pools.size()];
		for (int node : nodes) {
			owing[node] = Boolean.TRUE;
		}
		return owing;
	}

	/** A round that wrote to every node in its first pass, in list order. */
	private static final class Round extends WriteTimes {

		private final int nodes;

		Round(List<NodeConnectionPool> pools) {
			this(pools, System.nanoTime());
		}

		Round(List<NodeConnectionPool> pools, long start) {
			super(start);
			this.nodes = pools.size();
			firstPassDone();
		}

		@Override
		int nodeCount() {
			return this.nodes;
		}

	}

}
