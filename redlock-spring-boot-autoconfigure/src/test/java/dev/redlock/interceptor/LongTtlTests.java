package dev.redlock.interceptor;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import dev.redlock.NodeKeys;
import dev.redlock.annotation.DistributedLock;
import dev.redlock.annotation.OnLeaseLost;
import dev.redlock.core.Lease;
import dev.redlock.core.LeaseLostException;
import dev.redlock.core.NodeStatus;
import dev.redlock.core.Redlock;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A {@code ttl} longer than the restart quarantine (which caps every TTL on the nodes) is
 * served, not refused: the lock is taken with the quarantine as its TTL and renewed while
 * the method runs, up to the {@code ttl}. Here the quarantine is 3 s, and the nightly job
 * of the documentation is scaled down to match: a renewal is due after a third of it, and
 * the two thirds left must hold a round of up to a node timeout (1 s in these tests) and
 * a renewal thread that a loaded machine runs late.
 */
@SpringBootTest(
		properties = { "redlock.restart-quarantine=3s", "redlock.default-ttl=1s", "redlock.default-wait-time=0s" })
@WithRedisNodes(count = 3)
class LongTtlTests {

	private static final Duration QUARANTINE = Duration.ofSeconds(3);

	@Autowired
	private Jobs jobs;

	@Autowired
	private Redlock redlock;

	@Autowired
	private RedisNodes nodes;

	@BeforeEach
	void nodesCountTowardsAQuorum() {
		// the kit's nodes may have been started less than the quarantine ago
		NodeKeys.awaitTrue("every node counts", Duration.ofSeconds(10),
				() -> this.redlock.checkNodes().stream().allMatch(NodeStatus::counts));
	}

	@Test
	void aLockLongerThanTheQuarantineIsHeldByRenewalBeyondIt() throws Exception {
		AtomicBoolean running = new AtomicBoolean();
		CompletableFuture<Lease> job = CompletableFuture.supplyAsync(() -> this.jobs.nightly(running));
		NodeKeys.awaitTrue("the job started", running::get);
		AtomicLong longestPttl = new AtomicLong();
		int refused = Contention.refusalsWhile(running, this.jobs::contender, () -> {
			longestPttl.accumulateAndGet(NodeKeys.quorumPttl(this.nodes, "redlock:nightly"), Math::max);
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
		});
		Lease lease = job.get(20, TimeUnit.SECONDS);
		assertThat(lease.ttl()).as("the TTL given to the nodes").isEqualTo(QUARANTINE);
		assertThat(longestPttl.get()).isPositive().isLessThanOrEqualTo(QUARANTINE.toMillis());
		assertThat(lease.heldFor()).isGreaterThan(QUARANTINE.multipliedBy(2));
		assertThat(lease.extensionAttempts()).isGreaterThanOrEqualTo(3);
		assertThat(lease.isLost()).isFalse();
		assertThat(lease.isReleased()).isTrue();
		assertThat(refused).isPositive();
		NodeKeys.awaitReleased(this.nodes, "redlock:nightly");
	}

	@Test
	void aLockLongerThanTheQuarantineRunsOutNoLaterThanItsTtl() {
		long start = System.nanoTime();
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(this.jobs::outrun);
		Duration ran = Duration.ofNanos(System.nanoTime() - start);
		// renewed until ttl - quarantine (2 s, a second after the first renewal is due:
		// time for it to run late), then the last TTL runs out: after the quarantine,
		// never after the ttl (5 s). The bound leaves 1 s for a loaded machine, and is
		// below the 7 s a lease renewed up to the ttl, and so beyond it, would last
		assertThat(ran).isGreaterThanOrEqualTo(QUARANTINE).isLessThan(Duration.ofSeconds(6));
		NodeKeys.awaitReleased(this.nodes, "redlock:outrun");
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(Jobs.class)
	static class TestApplication {

	}

	static class Jobs {

		/** The documentation's nightly job, at this test's scale. */
		@DistributedLock(key = "'nightly'", ttl = "10s", minHold = "1s")
		public Lease nightly(AtomicBoolean running) {
			return ValidLease.heldFor(QUARANTINE.multipliedBy(2).plusMillis(500), running);
		}

		@DistributedLock(key = "'nightly'", ttl = "1s")
		public void contender() {
		}

		@DistributedLock(key = "'outrun'", ttl = "5s", onLeaseLost = OnLeaseLost.THROW)
		public void outrun() {
			Lease lease = LockContext.currentLease().orElseThrow();
			NodeKeys.awaitTrue("the lease ran out", Duration.ofSeconds(10), () -> !lease.isValid());
		}

	}

}
