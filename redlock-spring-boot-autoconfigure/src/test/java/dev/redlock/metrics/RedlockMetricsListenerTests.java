package dev.redlock.metrics;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.DoubleSupplier;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import dev.redlock.NodeKeys;
import dev.redlock.annotation.DistributedLock;
import dev.redlock.core.LockRequest;
import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.Redlock;
import dev.redlock.core.ReleaseOutcome;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.fail;

/**
 * The meters of annotated calls in a Spring Boot application with Boot's own metrics and
 * observation auto-configuration, on three real Redis nodes. Node faults are in
 * {@link RedlockMetricsListenerNodeFaultTests}, on nodes of their own: a killed node
 * would break the pooled connections of every other context that shares these.
 */
@SpringBootTest(properties = { "redlock.default-wait-time=0s",
		"management.metrics.distribution.percentiles-histogram.redlock.acquire=true",
		"management.metrics.distribution.percentiles.redlock.acquire=0.99" })
@WithRedisNodes(count = 3)
class RedlockMetricsListenerTests {

	@Autowired
	private ShopService shop;

	@Autowired
	private Redlock redlock;

	@Autowired
	private RedisNodes nodes;

	@Autowired
	private MeterRegistry meters;

	@Test
	void countsAcquisitionsAndReleasesByOutcomeExactly() {
		int calls = 10;
		int contended = 0;
		for (int i = 0; i < calls; i++) {
			if (i % 3 == 0) {
				contended++;
				try (Lease held = this.redlock.acquire("sku:" + i, Duration.ofSeconds(10), Duration.ZERO)) {
					int sku = i;
					assertThatExceptionOfType(LockNotAcquiredException.class).isThrownBy(() -> this.shop.purchase(sku));
				}
			}
			else {
				this.shop.purchase(i);
			}
		}
		assertThat(contended).isEqualTo(4);
		assertThat(this.shop.purchases()).isEqualTo(calls - contended);
		assertThat(acquireTimer("purchase", "acquired").count()).isEqualTo(calls - contended);
		assertThat(acquireTimer("purchase", "contended").count()).isEqualTo(contended);
		assertThat(acquireTimer("purchase", "no_quorum").count()).isZero();
		assertThat(acquireTimer("purchase", "error").count()).isZero();
		assertThat(this.meters.get("redlock.release").tags("lock", "purchase", "outcome", "released").counter().count())
			.isEqualTo(calls - contended);
		assertThat(this.meters.get("redlock.release").tags("lock", "purchase", "outcome", "expired").counter().count())
			.isZero();
		assertThat(this.meters.get("redlock.lease.lost").tag("lock", "purchase").counter().count()).isZero();
		assertThat(this.meters.get("redlock.held.duration").tag("lock", "purchase").timer().count())
			.isEqualTo(calls - contended);
		assertThat(this.meters.get("redlock.acquire.attempts").tag("lock", "purchase").summary().count())
			.isEqualTo(calls);
		assertThat(this.meters.get("redlock.acquire.attempts").tag("lock", "purchase").summary().max()).isEqualTo(1);
		assertThat(this.meters.get("redlock.validity.remaining").tag("lock", "purchase").summary().count())
			.isEqualTo(calls - contended);
		assertThat(this.meters.get("redlock.validity.remaining").tag("lock", "purchase").summary().max()).isPositive()
			.isLessThanOrEqualTo(10_000);
		// the programmatic holder has its own name, so the annotated method's meters
		// count only its calls
		assertThat(acquireTimer("unnamed", "acquired").count()).isGreaterThanOrEqualTo(contended);
	}

	@Test
	void heldGaugeCountsTheLeaseWhileTheMethodRuns() {
		assertThat(heldGauge()).isZero();
		double inside = this.shop.whileHeld(() -> heldGauge());
		assertThat(inside).isEqualTo(1);
		assertThat(heldGauge()).isZero();
	}

	@Test
	void waitTimerAndWaitersGaugeShowAThreadWaitingForALockHeldElsewhere() throws Exception {
		Lease held = this.redlock.acquire("sku:waited", Duration.ofSeconds(10), Duration.ZERO);
		CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> this.redlock
			.acquire(LockRequest.of("sku:waited", Duration.ofSeconds(10)).named("waited"), Duration.ofSeconds(30))
			.release());
		NodeKeys.awaitTrue("a thread counted as waiting",
				() -> this.meters.get("redlock.waiters").gauge().value() == 1);
		held.release();
		waiting.get(10, TimeUnit.SECONDS);
		assertThat(this.meters.get("redlock.waiters").gauge().value()).isZero();
		Timer waited = this.meters.get("redlock.wait").tags("lock", "waited", "outcome", "acquired").timer();
		assertThat(waited.count()).isEqualTo(1);
		assertThat(waited.totalTime(TimeUnit.NANOSECONDS)).isPositive();
		// a lock taken at once was not waited for; restock, not purchase: the test that
		// counts purchase's meters exactly shares this context, and may run later
		this.shop.restock(1);
		assertThat(this.meters.get("redlock.wait")
			.tags("lock", "restock", "outcome", "acquired")
			.timer()
			.max(TimeUnit.NANOSECONDS)).isZero();
	}

	@Test
	void leaseLostCountsAMethodThatOutranItsTtl() {
		double lostBefore = counter("redlock.lease.lost", "slow");
		double expiredBefore = this.meters.find("redlock.release")
			.tags("lock", "slow", "outcome", "expired")
			.counters()
			.stream()
			.mapToDouble((counter) -> counter.count())
			.sum();
		this.shop.outrunsItsLease("report", this.redlock.settings().keyPrefix() + "report", this.nodes);
		assertThat(counter("redlock.lease.lost", "slow")).isEqualTo(lostBefore + 1);
		assertThat(this.meters.get("redlock.release").tags("lock", "slow", "outcome", "expired").counter().count())
			.isEqualTo(expiredBefore + 1);
	}

	@Test
	void leaseLostIsCountedOncePerLeaseThoughItsReleaseFindsItExpiredToo() {
		// a TTL of 1 s, not less: the single attempt must get a quorum with validity left
		// on a loaded machine
		Lease lease = this.redlock.acquire(LockRequest.of("once-lost", Duration.ofSeconds(1)).named("once-lost"),
				Duration.ZERO);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
		while (!lease.isLost()) {
			if (System.nanoTime() - deadline > 0) {
				fail("a 1 s lease still not lost after 5 s");
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
		}
		assertThat(counter("redlock.lease.lost", "once-lost")).isEqualTo(1);
		while (this.nodes.nodes().stream().anyMatch((node) -> "1".equals(node.command("EXISTS", lease.redisKey())))) {
			if (System.nanoTime() - deadline > 0) {
				fail("key %s still on the nodes 5 s after a 1 s ttl", lease.redisKey());
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
		}
		assertThat(lease.release()).isEqualTo(ReleaseOutcome.EXPIRED);
		assertThat(this.meters.get("redlock.release").tags("lock", "once-lost", "outcome", "expired").counter().count())
			.isEqualTo(1);
		assertThat(counter("redlock.lease.lost", "once-lost")).isEqualTo(1);
	}

	@Test
	void acquireTimerTakesItsDistributionFromBootProperties() {
		this.shop.restock(300);
		// the simple registry computes percentiles client-side; the histogram buckets
		// that percentiles-histogram turns on are published only by registries with
		// aggregable percentiles (Prometheus)
		HistogramSnapshot snapshot = acquireTimer("restock", "acquired").takeSnapshot();
		assertThat(snapshot.percentileValues()).extracting(ValueAtPercentile::percentile).containsExactly(0.99);
		assertThat(this.meters.get("redlock.acquire.percentile")
			.tags("lock", "restock", "outcome", "acquired", "phi", "0.99")
			.gauge()
			.value()).isPositive();
	}

	@Test
	void observationMetersDoNotCollideWithTheListenersMeters() {
		this.shop.restock(400);
		// Boot turns every observation into a timer of its name, tagged with its
		// low-cardinality keys and the error: the lock's observations are there, as
		// documented...
		assertThat(this.meters.find("redlock.lock").tag("lock", "restock").timers()).isNotEmpty();
		assertTagKeys("redlock.lock", "lock", "outcome", "error");
		assertTagKeys("redlock.lock.acquire", "lock", "outcome", "error");
		assertTagKeys("redlock.lock.release", "lock", "outcome", "error");
		// ...and under names of their own, so each of the listener's meters keeps exactly
		// its documented tags
		assertTagKeys("redlock.acquire", "lock", "outcome");
		assertTagKeys("redlock.release", "lock", "outcome");
		assertTagKeys("redlock.wait", "lock", "outcome");
		assertTagKeys("redlock.acquire.attempts", "lock");
		assertTagKeys("redlock.validity.remaining", "lock");
		assertTagKeys("redlock.held.duration", "lock");
		assertTagKeys("redlock.node.requests", "node", "command", "outcome");
		assertThat(this.meters.get("redlock.held").gauge().getId().getTags()).isEmpty();
	}

	private void assertTagKeys(String name, String... keys) {
		List<Meter> found = List.copyOf(this.meters.find(name).meters());
		assertThat(found).as(name).isNotEmpty();
		for (Meter meter : found) {
			assertThat(meter.getId().getTags()).extracting(Tag::getKey)
				.as(meter.getId().toString())
				.containsExactlyInAnyOrder(keys);
		}
	}

	private Timer acquireTimer(String lock, String outcome) {
		return this.meters.get("redlock.acquire").tags("lock", lock, "outcome", outcome).timer();
	}

	private double heldGauge() {
		return this.meters.get("redlock.held").gauge().value();
	}

	private double counter(String name, String lock) {
		return this.meters.find(name).tag("lock", lock).counters().stream().mapToDouble((c) -> c.count()).sum();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(ShopService.class)
	static class TestApplication {

	}

	/**
	 * {@code purchase} is called only by the test that counts exactly; the other tests
	 * use {@code restock}.
	 */
	static class ShopService {

		private int purchases;

		@DistributedLock(name = "purchase", key = "'sku:' + #sku", ttl = "10s", waitTime = "0s")
		public void purchase(int sku) {
			this.purchases++;
		}

		@DistributedLock(name = "held", key = "'held'", ttl = "10s")
		public double whileHeld(DoubleSupplier probe) {
			return probe.getAsDouble();
		}

		/**
		 * Waits, with a deadline, until the lock's key has expired on every node, so the
		 * release finds it gone. A TTL of 1 s, not less: the single attempt must get a
		 * quorum with validity left on a loaded machine.
		 */
		@DistributedLock(name = "slow", key = "#resource", ttl = "1s")
		public void outrunsItsLease(String resource, String key, RedisNodes nodes) {
			NodeKeys.awaitReleased(nodes, key);
		}

		@DistributedLock(name = "restock", key = "'restock:' + #sku", ttl = "10s", waitTime = "0s")
		public void restock(int sku) {
		}

		public int purchases() {
			return this.purchases;
		}

	}

}
