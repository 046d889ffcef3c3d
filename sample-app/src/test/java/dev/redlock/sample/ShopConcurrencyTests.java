package dev.redlock.sample;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shop as the README runs it ({@link TestShopApplication}): no {@code redlock.nodes}
 * configured, so {@link LocalRedisNodesConfiguration} starts three Redis nodes for it,
 * and concurrent buyers hit the locked endpoint over HTTP. The node timeout is 1 s, not
 * the default 100 ms: on a loaded machine a healthy node can be descheduled for longer,
 * and these tests are not about timeouts.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "redlock.node-timeout=1s")
@Import(LocalRedisNodesConfiguration.class)
class ShopConcurrencyTests {

	private static final int STOCK = 20;

	private static final int BUYERS = 60;

	/** How long a buyer keeps trying again after a 423 or 503. */
	private static final Duration PATIENCE = Duration.ofSeconds(60);

	private final ExecutorService buyers = Executors.newFixedThreadPool(BUYERS);

	@LocalServerPort
	private int port;

	@Autowired
	private Environment environment;

	@BeforeEach
	void resetStock() throws Exception {
		assertThat(post("/api/skus/apple/reset?stock=" + STOCK).statusCode()).isEqualTo(200);
	}

	@AfterEach
	void stopBuyers() {
		this.buyers.shutdownNow();
	}

	@Test
	void startsItsOwnRedisNodesWhenNoneAreConfigured() {
		assertThat(this.environment.getProperty("redlock.nodes[0]")).startsWith("redis://127.0.0.1:");
		assertThat(this.environment.getProperty("redlock.nodes[2]")).startsWith("redis://127.0.0.1:");
	}

	@Test
	void lockedEndpointNeverOversellsUnderConcurrentBuyers() throws Exception {
		CountDownLatch ready = new CountDownLatch(BUYERS);
		CountDownLatch go = new CountDownLatch(1);
		List<Future<HttpResponse<String>>> responses = new ArrayList<>();
		AtomicInteger triedAgain = new AtomicInteger();
		for (int i = 0; i < BUYERS; i++) {
			responses.add(this.buyers.submit(() -> {
				ready.countDown();
				assertThat(go.await(10, TimeUnit.SECONDS)).isTrue();
				return buyUntilAnswered(triedAgain);
			}));
		}
		assertThat(ready.await(10, TimeUnit.SECONDS)).isTrue();
		go.countDown();

		List<Integer> statuses = new ArrayList<>();
		for (Future<HttpResponse<String>> response : responses) {
			statuses.add(response.get(PATIENCE.plusSeconds(15).toSeconds(), TimeUnit.SECONDS).statusCode());
		}
		Map<Integer, Long> byStatus = statuses.stream()
			.collect(Collectors.groupingBy(Function.identity(), Collectors.counting()));
		System.out.printf("%d buyers, stock %d: %s, %d tries again after 423 or 503%n", BUYERS, STOCK, byStatus,
				triedAgain.get());
		// every buyer got an answer: bought, or sold out
		assertThat(byStatus.keySet()).as("statuses %s", byStatus).isSubsetOf(200, 409);
		assertThat(byStatus.get(200)).as("statuses %s", byStatus).isEqualTo(STOCK);

		JsonNode sku = JsonMapper.shared().readTree(get("/api/skus/apple").body());
		assertThat(sku.path("sold").asLong()).isEqualTo(STOCK);
		assertThat(sku.path("stock").asLong()).isZero();
		assertThat(sku.path("oversold").asLong()).isZero();
		assertThat(sku.path("initialStock").asLong()).isEqualTo(STOCK);
	}

	@Test
	void theFencingDemoRefusesTheWriteOfAHolderThatPausedPastItsLease() throws Exception {
		HttpResponse<String> response = post("/api/demo/fencing");
		assertThat(response.statusCode()).isEqualTo(200);
		JsonNode demo = JsonMapper.shared().readTree(response.body());
		assertThat(demo.path("firstWriteByA").asBoolean()).isTrue();
		assertThat(demo.path("tokenB").asLong()).isGreaterThan(demo.path("tokenA").asLong());
		assertThat(demo.path("writeByB").asBoolean()).isTrue();
		assertThat(demo.path("staleWriteByA").asBoolean()).isFalse();
		assertThat(demo.path("releaseByA").asString()).isEqualTo("EXPIRED");
		assertThat(demo.path("ledgerBalance").asString()).isEqualTo("80 (written by B)");
	}

	@Test
	void soldOutIsAConflictAndUnknownSkuIsNotFound() throws Exception {
		post("/api/skus/pear/reset?stock=1");
		HttpResponse<String> first = post("/api/skus/pear/buy");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(JsonMapper.shared().readTree(first.body()).path("stockLeft").asLong()).isZero();
		HttpResponse<String> second = post("/api/skus/pear/buy");
		assertThat(second.statusCode()).isEqualTo(409);
		assertThat(JsonMapper.shared().readTree(second.body()).path("reason").asString()).isEqualTo("sold out");
		assertThat(get("/api/skus/kiwi").statusCode()).isEqualTo(404);
	}

	/**
	 * Buys until the shop answers bought (200) or sold out (409): a buyer that found the
	 * lock busy for the endpoint's 2 s wait (423), as 60 buyers through one lock can on a
	 * loaded machine, or too few nodes answering in time (503) tries again, as the
	 * answer's Retry-After says, though sooner.
	 */
	private HttpResponse<String> buyUntilAnswered(AtomicInteger triedAgain) throws Exception {
		long deadline = System.nanoTime() + PATIENCE.toNanos();
		HttpResponse<String> response = post("/api/skus/apple/buy");
		while ((response.statusCode() == 423 || response.statusCode() == 503) && System.nanoTime() - deadline < 0) {
			triedAgain.incrementAndGet();
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(ThreadLocalRandom.current().nextInt(10, 50)));
			response = post("/api/skus/apple/buy");
		}
		return response;
	}

	private HttpResponse<String> post(String path) throws Exception {
		return ShopHttp.post(this.port, path);
	}

	private HttpResponse<String> get(String path) throws Exception {
		return ShopHttp.get(this.port, path, "*/*");
	}

}
