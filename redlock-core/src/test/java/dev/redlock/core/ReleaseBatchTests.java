package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import dev.redlock.core.RedlockListener.NodeCommand;
import dev.redlock.core.RedlockListener.NodeOutcome;
import dev.redlock.core.RedlockListener.NodeRequestEvent;
import dev.redlock.core.internal.lease.ReleaseBatches;
import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With the pooled transport, releases asked for while the nodes are busy with others go
 * together: once {@value ReleaseBatches#ROUNDS_OUT} release rounds are out, the next
 * releases wait, and the first of them sends them all in one round when a round ends,
 * each still settled on its own nodes' answers. Three of five nodes are frozen, so the
 * first rounds stay out (a quorum needs one of them) until the test lets them go: no
 * timing decides which releases wait.
 */
@WithRedisNodes(count = 5)
class ReleaseBatchTests {

	private static final Duration TTL = Duration.ofSeconds(60);

	private static final Duration PATIENCE = Duration.ofSeconds(30);

	/**
	 * A node timeout far longer than the test: the frozen nodes hold the first rounds out
	 * until the test resumes them, never until a timeout. No key prefix: the test deletes
	 * a key itself. The pooled transport: with the others, every release runs at once in
	 * a round of its own.
	 */
	private static final RedlockSettings SETTINGS = TestSupport.SETTINGS.toBuilder()
		.keyPrefix("")
		.nodeTimeout(PATIENCE)
		.transport(RedlockSettings.Transport.POOLED)
		.build();

	/** Far longer than a loaded machine keeps a healthy node's reply waiting. */
	private static final Duration SLOW_ONE_WAY = Duration.ofMillis(100);

	/** Releases that wait, more than the rounds that are out. */
	private static final int WAITING = 8;

	@ParameterizedTest(name = "virtual threads: {0}")
	@MethodSource("dev.redlock.core.TestThreads#kinds")
	void releasesAskedForWhileRoundsAreOutGoInOneRoundEachSettledOnItsOwn(boolean virtual, RedisNodes nodes)
			throws Exception {
		ReleaseRequests requests = new ReleaseRequests();
		try (Redlock redlock = TestSupport.redlock(nodes, SETTINGS, requests)) {
			List<Lease> first = acquire(redlock, "first-", ReleaseBatches.ROUNDS_OUT);
			List<Lease> waiting = acquire(redlock, "waiting-", WAITING);
			// one lease of the batch lost its key everywhere: its release alone finds
			// the lock expired
			for (int i = 0; i < nodes.size(); i++) {
				nodes.node(i).command("DEL", "waiting-0");
			}
			List<TestThreads.Running<ReleaseOutcome>> firstReleases = holdRoundsOut(redlock, nodes, first, virtual, 0,
					1, 2);
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
			awaitWaiting(redlock, WAITING);
			interrupted.thread().interrupt();
			// a node that lost its scripts meanwhile is asked again by their source
			for (int i = 3; i < nodes.size(); i++) {
				nodes.node(i).command("SCRIPT", "FLUSH");
			}
			resume(nodes, 0, 1, 2);

			assertReleased(firstReleases);
			assertThat(waitingReleases.get(0).await(PATIENCE)).isEqualTo(ReleaseOutcome.EXPIRED);
			assertReleased(waitingReleases.subList(1, WAITING - 1));
			assertThat(interrupted.await(PATIENCE)).isTrue();
			assertThat(waiting).allMatch(Lease::isReleased);
			TestSupport.awaitNoKeys(nodes);
			// a batch retried by source counts once
			requests.awaitThreePerNode(nodes.size());
			assertThat(redlock.internals().releaseRoundsOut()).isZero();
		}
		finally {
			resume(nodes, 0, 1, 2);
		}
	}

	/**
	 * A node known to be slow delays no batch: the batch settles on the others, and the
	 * slow node's reply to it is read off the callers' threads.
	 */
	@ParameterizedTest(name = "virtual threads: {0}")
	@MethodSource("dev.redlock.core.TestThreads#kinds")
	void aSlowNodesReplyToABatchIsReadLate(boolean virtual, RedisNodes nodes) throws Exception {
		ReleaseRequests requests = new ReleaseRequests();
		List<String> uris = new ArrayList<>(nodes.uris());
		try (LatencyProxy slow = LatencyProxy.to(nodes.node(4), Duration.ZERO)) {
			uris.set(4, slow.uri());
			try (Redlock redlock = Redlock.builder().nodes(uris).settings(SETTINGS).listener(requests).build()) {
				slow.delay(SLOW_ONE_WAY);
				redlock.acquire("measure", TTL, Duration.ZERO).release();
				TestSupport.awaitTrue("the slow node measured", PATIENCE,
						() -> redlock.internals().expectedLatencies().get(4) > 100);
				List<Lease> first = acquire(redlock, "first-", ReleaseBatches.ROUNDS_OUT);
				List<Lease> waiting = acquire(redlock, "waiting-", WAITING);
				// the slow node's connections are free again: each round has one to
				// write to
				TestSupport.awaitTrue("the slow node's late replies read", PATIENCE,
						() -> redlock.internals().connectionsInUse(4) == 0);
				requests.reset();
				List<TestThreads.Running<ReleaseOutcome>> firstReleases = holdRoundsOut(redlock, nodes, first, virtual,
						0, 1, 2);
				List<TestThreads.Running<ReleaseOutcome>> waitingReleases = new ArrayList<>();
				for (Lease lease : waiting) {
					waitingReleases.add(TestThreads.start(virtual, lease::release));
				}
				awaitWaiting(redlock, WAITING);
				resume(nodes, 0, 1, 2);

				assertReleased(firstReleases);
				assertReleased(waitingReleases);
				TestSupport.awaitNoKeys(nodes);
				requests.awaitThreePerNode(nodes.size());
				// the slow node answered the batch too: its reply, read off the callers'
				// threads, is heard of
				assertThat(requests.answeredBy(slow.host() + ":" + slow.port())).isEqualTo(3);
			}
			finally {
				resume(nodes, 0, 1, 2);
			}
		}
	}

	/**
	 * A listener may release another lease from inside a release round, even when every
	 * round allowed out is held by such a listener: a caller already running a round
	 * never waits for a round to end (it would wait for its own), it runs its release at
	 * once.
	 */
	@ParameterizedTest(name = "virtual threads: {0}")
	@MethodSource("dev.redlock.core.TestThreads#kinds")
	void aListenerReleasingFromInsideEveryRoundOutDoesNotWaitForItsOwnRound(boolean virtual, RedisNodes nodes)
			throws Exception {
		ReleasingListener listener = new ReleasingListener();
		try (Redlock redlock = TestSupport.redlock(nodes, SETTINGS, listener)) {
			List<Lease> outer = acquire(redlock, "outer-", ReleaseBatches.ROUNDS_OUT);
			List<Lease> inner = acquire(redlock, "inner-", ReleaseBatches.ROUNDS_OUT);
			List<TestThreads.Running<ReleaseOutcome>> outerReleases = new ArrayList<>();
			for (int i = 0; i < ReleaseBatches.ROUNDS_OUT; i++) {
				Lease outerLease = outer.get(i);
				Lease innerLease = inner.get(i);
				outerReleases.add(TestThreads.start(virtual, () -> {
					listener.releaseFromInside(innerLease);
					return outerLease.release();
				}));
			}

			assertReleased(outerReleases);
			assertThat(listener.innerOutcomes).hasSize(ReleaseBatches.ROUNDS_OUT)
				.allMatch((outcome) -> outcome == ReleaseOutcome.RELEASED);
			assertThat(inner).allMatch(Lease::isReleased);
			TestSupport.awaitNoKeys(nodes);
			assertThat(redlock.internals().releaseRoundsOut()).isZero();
		}
	}

	private static List<Lease> acquire(Redlock redlock, String prefix, int count) {
		List<Lease> leases = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			leases.add(redlock.acquire(prefix + i, TTL, Duration.ZERO));
		}
		return leases;
	}

	/**
	 * Freezes three nodes, so that no quorum answers, and starts the releases that keep
	 * every round allowed out until the nodes are resumed. Every pool first holds its
	 * warm connections: each round then has one to a frozen node, and writes to it.
	 */
	private static List<TestThreads.Running<ReleaseOutcome>> holdRoundsOut(Redlock redlock, RedisNodes nodes,
			List<Lease> first, boolean virtual, int... frozen) {
		TestSupport.awaitWarmPools(redlock);
		for (int node : frozen) {
			nodes.node(node).pause();
		}
		List<TestThreads.Running<ReleaseOutcome>> releases = new ArrayList<>();
		for (Lease lease : first) {
			releases.add(TestThreads.start(virtual, lease::release));
		}
		TestSupport.awaitTrue("the first releases' rounds are out", PATIENCE,
				() -> redlock.internals().releaseRoundsOut() == ReleaseBatches.ROUNDS_OUT);
		return releases;
	}

	private static void awaitWaiting(Redlock redlock, int count) {
		TestSupport.awaitTrue(count + " releases wait", PATIENCE, () -> redlock.internals().releasesWaiting() == count);
	}

	private static void resume(RedisNodes nodes, int... frozen) {
		for (int node : frozen) {
			nodes.node(node).resume();
		}
	}

	private static void assertReleased(List<TestThreads.Running<ReleaseOutcome>> releases) throws Exception {
		for (TestThreads.Running<ReleaseOutcome> release : releases) {
			assertThat(release.await(PATIENCE)).isEqualTo(ReleaseOutcome.RELEASED);
		}
	}

	/**
	 * Releases a lease of the caller's from inside the caller's release round, once every
	 * round allowed out is inside this listener.
	 */
	private static final class ReleasingListener implements RedlockListener {

		private final Map<Thread, Lease> toRelease = new ConcurrentHashMap<>();

		private final CyclicBarrier everyRoundOut = new CyclicBarrier(ReleaseBatches.ROUNDS_OUT);

		final List<ReleaseOutcome> innerOutcomes = new CopyOnWriteArrayList<>();

		void releaseFromInside(Lease lease) {
			this.toRelease.put(Thread.currentThread(), lease);
		}

		@Override
		public void nodeRequestFinished(NodeRequestEvent event) {
			Lease lease = (event.command() == NodeCommand.RELEASE) ? this.toRelease.remove(Thread.currentThread())
					: null;
			if (lease == null) {
				return;
			}
			try {
				this.everyRoundOut.await(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
			}
			catch (Exception ex) {
				throw new IllegalStateException("Not every round was out at once", ex);
			}
			this.innerOutcomes.add(lease.release());
		}

	}

	/** Counts the release requests the listeners hear of, by node, in time or late. */
	private static final class ReleaseRequests implements RedlockListener {

		private final Map<String, LongAdder> byNode = new ConcurrentHashMap<>();

		private final Map<String, LongAdder> answeredByNode = new ConcurrentHashMap<>();

		@Override
		public void nodeRequestFinished(NodeRequestEvent event) {
			if (event.command() == NodeCommand.RELEASE) {
				this.byNode.computeIfAbsent(event.node(), (node) -> new LongAdder()).increment();
				if (event.outcome() == NodeOutcome.OK || event.outcome() == NodeOutcome.REJECTED) {
					this.answeredByNode.computeIfAbsent(event.node(), (node) -> new LongAdder()).increment();
				}
			}
		}

		void reset() {
			this.byNode.clear();
			this.answeredByNode.clear();
		}

		/**
		 * The release requests the node answered (it deleted every value in it, or not
		 * all of them: a lease whose acquisition left the slow node out has none there),
		 * rather than timed out or failed.
		 */
		long answeredBy(String node) {
			LongAdder count = this.answeredByNode.get(node);
			return (count != null) ? count.sum() : 0;
		}

		/**
		 * Waits until every node answered three release requests, in time or late, and
		 * checks that none answered more: the first two releases, then one for the
		 * waiting ones. Without the batch, each release would be a request of its own.
		 */
		void awaitThreePerNode(int nodes) {
			TestSupport.awaitTrue("every node's replies heard of", PATIENCE, () -> this.byNode.size() == nodes
					&& this.byNode.values().stream().allMatch((count) -> count.sum() >= 3));
			assertThat(this.byNode.values()).allMatch((count) -> count.sum() == 3);
		}

	}

}
