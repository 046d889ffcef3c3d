package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import org.junit.jupiter.api.Test;

import dev.redlock.core.RedlockListener.ExtendEvent;
import dev.redlock.core.RedlockListener.NodeCommand;
import dev.redlock.core.RedlockListener.NodeRequestEvent;
import dev.redlock.core.TestSupport.ManualTicker;
import dev.redlock.core.internal.lease.RenewalBatches;
import dev.redlock.core.internal.protocol.HashSlot;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Renewals due together go to the nodes together: one request per node for a batch of
 * leases, each lease still judged on its own. The leases' ticker stands still, so that
 * every lease falls due at the same moment however long the acquisitions take on a busy
 * machine; the renewals themselves run in real time, a third of the TTL apart. The keys
 * expire in real time too: the TTL of 6 s leaves 4 s for the acquisitions before the
 * first renewal.
 */
@WithRedisNodes(count = 3)
class RenewalBatchTests {

	private static final Duration TTL = Duration.ofSeconds(6);

	private static final Duration PATIENCE = Duration.ofSeconds(30);

	@Test
	void leasesDueTogetherAreRenewedWithOneRequestPerNodeForEachBatch(RedisNodes nodes) {
		// more than one batch holds
		int count = RenewalBatches.MAX_BATCH + 44;
		ExtendRequests requests = new ExtendRequests();
		try (Redlock redlock = redlock(nodes, new ManualTicker(), requests)) {
			List<Lease> leases = acquire(redlock, "batched-", count);
			leases.forEach(Lease::autoRenew);
			awaitRenewals(leases, 2);
			// even a node that lost its scripts is renewed, by the scripts' source
			for (int i = 0; i < nodes.size(); i++) {
				nodes.node(i).command("SCRIPT", "FLUSH");
			}
			awaitRenewals(leases, 3);
			long renewals = leases.stream().mapToLong(Lease::extensionAttempts).sum();
			// one request per node and batch (a batch retried by source counts once);
			// one per lease without batches. A tenth allows for leases falling due
			// apart on a machine too busy to start them together
			assertThat(requests.mostToOneNode()).isPositive().isLessThanOrEqualTo(renewals / 10);
			assertThat(leases).noneMatch(Lease::isLost);
			assertThat(leases).allMatch((lease) -> lease.release() == ReleaseOutcome.RELEASED);
			System.out.printf("[renewal batches] %d leases, %d renewals, at most %d requests to one node%n", count,
					renewals, requests.mostToOneNode());
		}
		TestSupport.awaitNoKeys(nodes);
	}

	/**
	 * Two voters, the first of two shard nodes: the leases' keys fall in two key ranges
	 * (slots below 8,192 on node 0, the others on node 1, every key on node 2), and a
	 * batch goes as one request per node for each range it touches. Renewed one round per
	 * lease before, node 2 had a request per lease.
	 */
	@Test
	void leasesDueTogetherOnVotersOfSeveralNodesGoInOneRequestPerNodeForEachKeyRange(RedisNodes nodes) {
		ExtendRequests requests = new ExtendRequests();
		try (Redlock redlock = Redlock.builder()
			.shardedVoter(List.of(nodes.node(0).uri(), nodes.node(1).uri()))
			.node(nodes.node(2).uri())
			.settings(TestSupport.SETTINGS)
			.ticker(new ManualTicker())
			.listener(requests)
			.build()) {
			List<Lease> leases = acquire(redlock, "sharded-", 40);
			assertThat(leases).extracting((lease) -> HashSlot.of(lease.redisKey()) < HashSlot.SLOTS / 2)
				.as("keys in both ranges")
				.contains(true, false);
			leases.forEach(Lease::autoRenew);
			awaitRenewals(leases, 2);
			long renewals = leases.stream().mapToLong(Lease::extensionAttempts).sum();
			assertThat(requests.mostToOneNode()).isPositive().isLessThanOrEqualTo(renewals / 10);
			assertThat(leases).noneMatch(Lease::isLost);
			assertThat(leases).allMatch((lease) -> lease.release() == ReleaseOutcome.RELEASED);
		}
		TestSupport.awaitNoKeys(nodes);
	}

	@Test
	void aLeaseGoneFromAMajorityIsLostWhileTheOthersOfItsBatchAreRenewed(RedisNodes nodes) {
		try (Redlock redlock = redlock(nodes, new ManualTicker(), new ExtendRequests())) {
			List<Lease> leases = acquire(redlock, "judged-", 20);
			leases.forEach(Lease::autoRenew);
			awaitRenewals(leases, 1);
			Lease gone = leases.remove(7);
			nodes.node(0).command("DEL", TestSupport.PREFIX + "judged-7");
			nodes.node(1).command("DEL", TestSupport.PREFIX + "judged-7");
			TestSupport.awaitTrue("the lease whose key is gone is lost", PATIENCE, gone::isLost);
			assertThat(gone.lossReason()).contains(LossReason.EXTENSION_FAILED);
			int renewedBefore = leases.stream().mapToInt(Lease::extensionAttempts).min().orElseThrow();
			awaitRenewals(leases, renewedBefore + 1);
			assertThat(leases).noneMatch(Lease::isLost);
			assertThat(leases).allMatch(Lease::isAutoRenewing);
			assertThat(leases).allMatch((lease) -> lease.release() == ReleaseOutcome.RELEASED);
		}
		TestSupport.awaitNoKeys(nodes);
	}

	/**
	 * Two leases renewed in one batch, for sure: their runs fall due while the renewal
	 * thread is held up by a listener, so they run back to back once it is let go.
	 */
	@Test
	void aListenerToldOfARenewalMayReleaseAnotherLeaseOfTheBatchFromAnotherThread(RedisNodes nodes) throws Exception {
		CountDownLatch gateReached = new CountDownLatch(1);
		CountDownLatch gateOpen = new CountDownLatch(1);
		CompletableFuture<Lease> second = new CompletableFuture<>();
		AtomicInteger secondRenewalsSeenByTheFirst = new AtomicInteger(-1);
		CompletableFuture<ReleaseOutcome> releasedElsewhere = new CompletableFuture<>();
		RedlockListener listener = new RedlockListener() {
			@Override
			public void leaseExtended(ExtendEvent event) {
				if (event.resource().equals("gate") && gateReached.getCount() > 0) {
					gateReached.countDown();
					await(gateOpen);
				}
				if (event.resource().equals("first") && secondRenewalsSeenByTheFirst.get() < 0) {
					secondRenewalsSeenByTheFirst.set(second.join().extensionAttempts());
					// the second lease's state lock must be free by now, though its
					// renewal went in the same batch
					CompletableFuture.supplyAsync(() -> second.join().release())
						.orTimeout(10, TimeUnit.SECONDS)
						.whenComplete((outcome, ex) -> {
							if (ex != null) {
								releasedElsewhere.completeExceptionally(ex);
							}
							else {
								releasedElsewhere.complete(outcome);
							}
						})
						.exceptionally((ex) -> null)
						.join();
				}
			}
		};
		ManualTicker ticker = new ManualTicker();
		try (Redlock redlock = redlock(nodes, ticker, listener)) {
			Lease gate = redlock.acquire("gate", TTL, Duration.ofSeconds(5));
			Lease first = redlock.acquire("first", TTL, Duration.ofSeconds(5));
			second.complete(redlock.acquire("second", TTL, Duration.ofSeconds(5)));
			gate.autoRenew();
			assertThat(gateReached.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
			// due at once, queued behind the held-up renewal thread
			ticker.advance(TTL.dividedBy(3));
			first.autoRenew();
			second.join().autoRenew();
			gateOpen.countDown();
			assertThat(releasedElsewhere.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
				.isEqualTo(ReleaseOutcome.RELEASED);
			assertThat(secondRenewalsSeenByTheFirst).as("renewals of the second lease when the first's was told")
				.hasValue(1);
			assertThat(first.isLost()).isFalse();
			assertThat(second.join().isLost()).isFalse();
			assertThat(first.release()).isEqualTo(ReleaseOutcome.RELEASED);
			assertThat(gate.release()).isEqualTo(ReleaseOutcome.RELEASED);
		}
		TestSupport.awaitNoKeys(nodes);
	}

	private static void await(CountDownLatch latch) {
		try {
			if (!latch.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)) {
				throw new IllegalStateException("never opened");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static Redlock redlock(RedisNodes nodes, ManualTicker ticker, RedlockListener listener) {
		return Redlock.builder()
			.nodes(nodes.uris())
			.settings(TestSupport.SETTINGS)
			.ticker(ticker)
			.listener(listener)
			.build();
	}

	private static List<Lease> acquire(Redlock redlock, String prefix, int count) {
		List<Lease> leases = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			leases.add(redlock.acquire(prefix + i, TTL, Duration.ofSeconds(5)));
		}
		return leases;
	}

	private static void awaitRenewals(List<Lease> leases, int renewals) {
		TestSupport.awaitTrue("every lease was renewed " + renewals + " times", PATIENCE,
				() -> leases.stream().allMatch((lease) -> lease.extensionAttempts() >= renewals));
	}

	/** Counts the extension requests each node got. */
	private static final class ExtendRequests implements RedlockListener {

		private final Map<String, LongAdder> byNode = new ConcurrentHashMap<>();

		@Override
		public void nodeRequestFinished(NodeRequestEvent event) {
			if (event.command() == NodeCommand.EXTEND) {
				this.byNode.computeIfAbsent(event.node(), (node) -> new LongAdder()).increment();
			}
		}

		long mostToOneNode() {
			return this.byNode.values().stream().mapToLong(LongAdder::sum).max().orElse(0);
		}

	}

}
