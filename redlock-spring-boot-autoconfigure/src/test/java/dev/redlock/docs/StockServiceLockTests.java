package dev.redlock.docs;

import java.time.Duration;

import dev.redlock.annotation.DistributedLock;
import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
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
 * The example of {@code docs/testing.md}, run as a user's test would be: a service under
 * {@code @DistributedLock}, the locked call, and the call refused while another instance
 * (a second {@code Redlock} on the same nodes) holds the lock. The page shows the test
 * class without the configuration and the service, which are the application's.
 */
// tag::service-test[]
@SpringBootTest
@WithRedisNodes(count = 3)
class StockServiceLockTests {

	@Autowired
	StockService stock;

	@Autowired
	RedisNodes nodes;

	Redlock otherInstance;

	@BeforeEach
	void startOtherInstance() {
		// another instance of the app, on the same nodes: nodes just started are
		// clean, so the restart quarantine is off for them
		RedlockSettings settings = RedlockSettings.defaults().withRestartQuarantine(Duration.ZERO);
		this.otherInstance = Redlock.builder().nodes(this.nodes.uris()).settings(settings).build();
	}

	@AfterEach
	void stopOtherInstance() {
		this.otherInstance.close();
	}

	@Test
	void buysUnderTheLock() {
		assertThat(this.stock.buy("apple")).isEqualTo("bought apple");
	}

	@Test
	void refusesWhileAnotherInstanceHoldsTheSku() {
		try (Lease held = this.otherInstance.acquire("stock:apple", Duration.ofSeconds(10), Duration.ZERO)) {
			assertThatExceptionOfType(LockNotAcquiredException.class).isThrownBy(() -> this.stock.buy("apple"))
				.satisfies((ex) -> assertThat(ex.reason()).isEqualTo(LockNotAcquiredException.Reason.CONTENDED));
			// other SKUs are not held
			assertThat(this.stock.buy("pear")).isEqualTo("bought pear");
		}
	}

	// end::service-test[]
	// stands in for the application's own @SpringBootApplication
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

	}

	// tag::service-test[]

}
// end::service-test[]
