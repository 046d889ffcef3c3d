package dev.redlock.interceptor;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import dev.redlock.NodeKeys;
import dev.redlock.annotation.DistributedLock;
import dev.redlock.annotation.OnLocked;
import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.Redlock;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Reactive return types, on three real Redis nodes: each subscription holds the lock from
 * the moment it subscribes until the publisher completes, fails or is cancelled.
 */
@SpringBootTest(properties = "redlock.default-wait-time=0s")
@WithRedisNodes(count = 3)
class ReactiveLockTests {

	@Autowired
	private Reports reports;

	@Autowired
	private Redlock redlock;

	@Autowired
	private RedisNodes nodes;

	@Test
	void aMonoHoldsTheLockFromSubscriptionUntilItCompletes() throws Exception {
		Sinks.One<String> result = Sinks.one();
		Mono<String> report = this.reports.build("1", result.asMono());
		assertThat(lockKeys("redlock:report:1")).as("nothing is locked before the subscription").isZero();
		CompletableFuture<String> running = report.toFuture();
		// a quorum: the lock is taken once two nodes granted it, the last may not be
		NodeKeys.awaitTrue("locked once subscribed", () -> lockKeys("redlock:report:1") >= 2);
		assertThatExceptionOfType(LockNotAcquiredException.class)
			.isThrownBy(() -> this.reports.build("1", Mono.just("second")).block(Duration.ofSeconds(5)));
		result.tryEmitValue("done");
		assertThat(running.get(5, TimeUnit.SECONDS)).isEqualTo("done");
		NodeKeys.awaitTrue("released on completion", () -> lockKeys("redlock:report:1") == 0);
	}

	@Test
	void aFailedOrCancelledSubscriptionReleases() throws InterruptedException {
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> this.reports.build("2", Mono.error(new IllegalStateException("broken")))
				.block(Duration.ofSeconds(5)));
		NodeKeys.awaitTrue("released on failure", () -> lockKeys("redlock:report:2") == 0);
		CountDownLatch running = new CountDownLatch(1);
		Disposable subscription = this.reports
			.build("2", Mono.<String>never().doOnSubscribe((s) -> running.countDown()))
			.subscribe();
		assertThat(running.await(5, TimeUnit.SECONDS)).as("the work starts once the lock is held").isTrue();
		assertThat(lockKeys("redlock:report:2")).as("nodes holding the lock").isGreaterThanOrEqualTo(2);
		subscription.dispose();
		NodeKeys.awaitTrue("released on cancellation", () -> lockKeys("redlock:report:2") == 0);
	}

	@Test
	void aFluxIsLockedWhileItEmitsAndSkippingEmitsNothing() {
		assertThat(this.reports.lines("3", Flux.just("a", "b", "c")).collectList().block(Duration.ofSeconds(5)))
			.containsExactly("a", "b", "c");
		NodeKeys.awaitTrue("released after the last line", () -> lockKeys("redlock:report:3") == 0);
		try (Lease held = this.redlock.acquire("report:3", Duration.ofSeconds(10), Duration.ZERO)) {
			assertThat(this.reports.lines("3", Flux.just("a")).collectList().block(Duration.ofSeconds(5))).isEmpty();
		}
	}

	@Test
	void theSubscriptionReachesItsLeaseAndFencingToken() {
		Mono<Long> token = this.reports.fenced("4");
		Long first = token.block(Duration.ofSeconds(5));
		// block() returns with the value; the release runs as the Mono completes
		NodeKeys.awaitTrue("released after the first subscription", () -> lockKeys("redlock:report:4") == 0);
		Long second = token.block(Duration.ofSeconds(5));
		// each subscription its own lease, with a token that grows
		assertThat(first).isNotNull().isPositive();
		assertThat(second).isNotNull().isGreaterThan(first);
		assertThat(this.reports.build("5", ReactiveLockContext.currentLease().map(Lease::resource))
			.block(Duration.ofSeconds(5))).isEqualTo("report:5");
		// outside a locked subscription, nothing
		assertThat(ReactiveLockContext.currentLease().blockOptional(Duration.ofSeconds(5))).isEmpty();
	}

	private int lockKeys(String key) {
		return NodeKeys.holding(this.nodes, key);
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(Reports.class)
	static class TestApplication {

	}

	static class Reports {

		@DistributedLock(key = "'report:' + #id", ttl = "10s")
		public Mono<String> build(String id, Mono<String> work) {
			return work;
		}

		@DistributedLock(key = "'report:' + #id", ttl = "10s", fencing = true)
		public Mono<Long> fenced(String id) {
			return ReactiveLockContext.fencingToken();
		}

		@DistributedLock(key = "'report:' + #id", ttl = "10s", onLocked = OnLocked.SKIP)
		public Flux<String> lines(String id, Flux<String> lines) {
			return lines;
		}

	}

}
