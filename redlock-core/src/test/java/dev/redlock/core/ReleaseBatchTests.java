package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import dev.redlock.core.RedlockListener.NodeCommand;
import dev.redlock.core.RedlockListener.NodeRequestEvent;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Releases asked for while the nodes are busy with others go together: once
 * {@value ReleaseBatches#ROUNDS_OUT} release rounds are out, the next releases wait, and
 * the first of them sends them all in one round when a round ends, each still settled on
 * its own nodes' answers. Three of five nodes are frozen, so the first rounds stay out (a
 * quorum needs one of them) until the test lets them go: no timing decides which releases
 * wait.
 */
@WithRedisNodes(count = 5)
class ReleaseBatchTests {

	private static final Duration TTL = Duration.ofSeconds(60);

	private static final Duration PATIENCE = Duration.ofSeconds(30);

	/** Releases that wait, more than the rounds that are out. */
	private static final int WAITING = 8;

	@ParameterizedTest(name = "virtual threads: {0}")
	@MethodSource("dev.redlock.core.TestThreads#kinds")
	void releasesAskedForWhileRoundsAreOutGoInOneRoundEachSettledOnItsOwn(boolean virtual, RedisNodes nodes)
			throws Exception {
		ReleaseRequests requests = new ReleaseRequests();
		// no key prefix: the test deletes one of the keys itself
		RedlockSettings settings = TestSupport.SETTINGS.toBuilder().keyPrefix("").nodeTimeout(PATIENCE).build();
		try (Redlock redlock = TestSupport.redlock(nodes, settings, requests)) {
			List<Lease> first = new ArrayList<>();
			List<Lease> waiting = new ArrayList<>();
			for (int i = 0; i < ReleaseBatches.ROUNDS_OUT; i++) {
				first.add(redlock.acquire("first-" + i, TTL, Duration.ZERO));
			}
			for (int i = 0; i < WAITING; i++) {
				waiting.add(redlock.acquire("waiting-" + i, TTL, Duration.ZERO));
			}
			// one lease of the batch lost its key everywhere: its release alone finds
			// the lock expired
			for (int i = 0; i < nodes.size(); i++) {
				nodes.node(i).command("DEL", "waiting-0");
			}
			for (int i = 0; i < 3; i++) {
				nodes.node(i).pause();
			}
			List<TestThreads.Running<ReleaseOutcome>> firstReleases = new ArrayList<>();
			for (Lease lease : first) {
				firstReleases.add(TestThreads.start(virtual, lease::release));
			}
			TestSupport.awaitTrue("the first releases' rounds are out", PATIENCE,
					() -> redlock.internals().releaseRoundsOut() == ReleaseBatches.ROUNDS_OUT);
			List<TestThreads.Running<ReleaseOutcome>> waitingReleases = new ArrayList<>();
			for (Lease lease : waiting.subList(0, WAITING - 1)) {
				waitingReleases.add(TestThreads.start(virtual, lease::release));
			}
			// the last caller is interrupted while it waits: its lease is released all
			// the same, and it finds its interrupt flag set again afterwards
			Lease interruptedLease = waiting.get(WAITING - 1);
			TestThreads.Running<Boolean> interrupted = TestThreads.start(virtual,
					() -> interruptedLease.release() == ReleaseOutcome.RELEASED
							&& Thread.currentThread().isInterrupted());
			TestSupport.awaitTrue("the other releases wait", PATIENCE,
					() -> redlock.internals().releasesWaiting() == WAITING);
			interrupted.thread().interrupt();
			// a node that lost its scripts meanwhile is asked again by their source
			for (int i = 3; i < nodes.size(); i++) {
				nodes.node(i).command("SCRIPT", "FLUSH");
			}
			for (int i = 0; i < 3; i++) {
				nodes.node(i).resume();
			}

			for (TestThreads.Running<ReleaseOutcome> release : firstReleases) {
				assertThat(release.await(PATIENCE)).isEqualTo(ReleaseOutcome.RELEASED);
			}
			assertThat(waitingReleases.get(0).await(PATIENCE)).isEqualTo(ReleaseOutcome.EXPIRED);
			for (TestThreads.Running<ReleaseOutcome> release : waitingReleases.subList(1, WAITING - 1)) {
				assertThat(release.await(PATIENCE)).isEqualTo(ReleaseOutcome.RELEASED);
			}
			assertThat(interrupted.await(PATIENCE)).isTrue();
			assertThat(waiting).allMatch(Lease::isReleased);
			TestSupport.awaitNoKeys(nodes);
			// each node heard of three requests: the first two releases, then one for
			// the waiting ones (a batch retried by source counts once); without the
			// batch, each release would have been a request of its own
			TestSupport.awaitTrue("every node's replies heard of", PATIENCE,
					() -> requests.byNode.size() == nodes.size()
							&& requests.byNode.values().stream().allMatch((count) -> count.sum() >= 3));
			assertThat(requests.byNode.values()).allMatch((count) -> count.sum() == 3);
			assertThat(redlock.internals().releaseRoundsOut()).isZero();
		}
		finally {
			for (int i = 0; i < 3; i++) {
				nodes.node(i).resume();
			}
		}
	}

	/** Counts the release requests each node answered, in time or late. */
	private static final class ReleaseRequests implements RedlockListener {

		private final Map<String, LongAdder> byNode = new ConcurrentHashMap<>();

		@Override
		public void nodeRequestFinished(NodeRequestEvent event) {
			if (event.command() == NodeCommand.RELEASE) {
				this.byNode.computeIfAbsent(event.node(), (node) -> new LongAdder()).increment();
			}
		}

	}

}
