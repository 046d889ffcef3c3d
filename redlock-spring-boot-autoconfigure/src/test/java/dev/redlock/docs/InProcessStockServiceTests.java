package dev.redlock.docs;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.redlock.annotation.DistributedLock;
import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.LockNotAcquiredException.Reason;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockSettings;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.stereotype.Service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The in-process stand-in of {@code docs/testing.md} keeps what the annotation does: a
 * locked call, a refusal while another instance holds the key, a waiter woken by the
 * release, a quorum with one node down and none with two. CI also runs the annotation's,
 * ShedLock's and Spring Integration's whole suites on it.
 */
@SpringBootTest(properties = { "redlock.retry-delay=20s", "redlock.node-timeout=1s" })
@WithRedisNodes(count = 3, inProcess = true)
class InProcessStockServiceTests {

	@Autowired
	StockService stock;

	@Autowired
	RedisNodes nodes;

	Redlock otherInstance;

	@BeforeEach
	void startOtherInstance() {
		RedlockSettings settings = RedlockSettings.defaults().withRestartQuarantine(Duration.ZERO);
		this.otherInstance = Redlock.builder().nodes(this.nodes.uris()).settings(settings).build();
	}

	@AfterEach
	void stopOtherInstance() {
		this.otherInstance.close();
	}

	@Test
	void theNodesAreStandInsInThisJvm() {
		assertThat(this.nodes.node(0).command("INFO", "server")).contains("redlock_in_process_stand_in:1");
	}

	@Test
	void aCallIsRefusedWhileAnotherInstanceHoldsItsKey() {
		assertThat(this.stock.buy("apple")).isEqualTo("bought apple");
		try (Lease held = this.otherInstance.acquire("stock:apple", Duration.ofSeconds(10), Duration.ZERO)) {
			assertThatExceptionOfType(LockNotAcquiredException.class).isThrownBy(() -> this.stock.buy("apple"))
				.satisfies((ex) -> assertThat(ex.reason()).isEqualTo(Reason.CONTENDED));
		}
	}

	@Test
	void aWaiterIsWokenByTheReleaseNotPolling() throws Exception {
		Lease held = this.otherInstance.acquire("stock:pear", Duration.ofSeconds(30), Duration.ZERO);
		CompletableFuture<String> waiting = CompletableFuture.supplyAsync(() -> this.stock.buyWaiting("pear"));
		// subscribed on every node: the waiter tries again once a quorum announced the
		// release
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (this.nodes.nodes()
			.stream()
			.anyMatch(
					(node) -> !node.command("PUBSUB", "NUMSUB", "redlock-released:redlock:stock:pear").endsWith("1"))) {
			assertThat(System.nanoTime() - deadline).as("the waiter subscribed within 10 s").isNegative();
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
		}
		held.release();
		// the retry delay is 20 s: only the release notice wakes it this soon
		assertThat(waiting.get(10, TimeUnit.SECONDS)).isEqualTo("bought pear");
	}

	@Test
	void aQuorumWithOneNodeDownAndNoneWithTwo() {
		// the other instance's client, so that the application's does not carry the
		// refused connections' back-off into the next test
		this.nodes.node(2).kill();
		try (Lease lease = this.otherInstance.acquire("stock:plum", Duration.ofSeconds(10), Duration.ZERO)) {
			assertThat(lease.isValid()).isTrue();
		}
		this.nodes.node(1).kill();
		assertThatExceptionOfType(LockNotAcquiredException.class)
			.isThrownBy(() -> this.otherInstance.acquire("stock:plum", Duration.ofSeconds(10), Duration.ZERO))
			.satisfies((ex) -> assertThat(ex.reason()).isEqualTo(Reason.NO_QUORUM));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(StockService.class)
	static class TestApplication {

	}

	@Service
	static class StockService {

		@DistributedLock(key = "'stock:' + #sku", ttl = "10s", waitTime = "0s")
		public String buy(String sku) {
			return "bought " + sku;
		}

		@DistributedLock(key = "'stock:' + #sku", ttl = "10s", waitTime = "15s")
		public String buyWaiting(String sku) {
			return "bought " + sku;
		}

	}

}
