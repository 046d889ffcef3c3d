package dev.redlock.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A node's steppable clock moves by what it is told, to the millisecond: a step of 750 ms
 * moves the node's {@code TIME} by 750 ms, neither by 0 nor by 1 s. Runs the embedded
 * Redis binary under libfaketime (the Maven profile {@code steppable-clock}).
 */
@Tag("steppable-clock")
class SteppableClockTests {

	/**
	 * The widest bracket of a node's offset that is narrow enough to tell 750 ms from 0
	 * or 1 s.
	 */
	private static final long NARROW_MILLIS = 100;

	@Test
	void aStepOfAFractionOfASecondMovesTheNodesTimeByThatMuch() {
		try (RedisNodes nodes = RedisNodes.startWithSteppableClocks(1)) {
			RedisNode node = nodes.node(0);
			Offset before = offset(node);
			node.stepClock(Duration.ofMillis(750));
			Offset after = offset(node);
			node.stepClock(Duration.ofMillis(-1_250));
			Offset back = offset(node);

			// each bracket is at most NARROW_MILLIS wide, so these exclude steps of 0 and
			// 1 s
			assertThat(after.lowest() - before.highest()).isLessThanOrEqualTo(750);
			assertThat(after.highest() - before.lowest()).isGreaterThanOrEqualTo(750);
			assertThat(back.lowest() - after.highest()).isLessThanOrEqualTo(-1_250);
			assertThat(back.highest() - after.lowest()).isGreaterThanOrEqualTo(-1_250);
		}
	}

	@Test
	void theOffsetIsWrittenToTheMillisecondWithAPoint() {
		assertThat(FakeClock.offsetText(0)).isEqualTo("+0.000s");
		assertThat(FakeClock.offsetText(750)).isEqualTo("+0.750s");
		assertThat(FakeClock.offsetText(-250)).isEqualTo("-0.250s");
		assertThat(FakeClock.offsetText(120_000)).isEqualTo("+120.000s");
		assertThat(FakeClock.offsetText(-1_005)).isEqualTo("-1.005s");
	}

	/**
	 * The node's clock minus ours, in milliseconds, bracketed by our readings before and
	 * after its {@code TIME}; read again until the bracket is narrow (a busy machine can
	 * keep a reply waiting).
	 */
	private static Offset offset(RedisNode node) {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (true) {
			long before = System.currentTimeMillis();
			String[] time = String.valueOf(node.command("TIME")).split("\n");
			long after = System.currentTimeMillis();
			long nodeMillis = Long.parseLong(time[0]) * 1_000 + Long.parseLong(time[1]) / 1_000;
			// our readings are whole milliseconds: one more either side
			Offset offset = new Offset(nodeMillis - after - 1, nodeMillis - before + 1);
			if (offset.highest() - offset.lowest() <= NARROW_MILLIS) {
				return offset;
			}
			if (System.nanoTime() - deadline > 0) {
				throw new AssertionError("no reading of the node's TIME within " + NARROW_MILLIS + " ms in 10 s");
			}
		}
	}

	private record Offset(long lowest, long highest) {
	}

}
