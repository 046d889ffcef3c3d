package dev.redlock.sample;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.redlock.test.RedisNodes;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Fires concurrent purchases of one SKU at two instances of the shop, first at the locked
 * endpoint and then at the unlocked one, and prints what was sold against the stock there
 * was. Exits with 0 when the locked run oversold nothing, 1 otherwise.
 *
 * <p>
 * It lives in the test sources, as it starts its Redis nodes with the test kit
 * ({@code redlock-test}, a test dependency of the sample). By default it starts three
 * Redis nodes and two shops (two application contexts in this JVM, each with its own
 * Redlock and connection pools, as two processes would have), and stops them at the end:
 *
 * <pre>
 * mvn -q -pl sample-app -am spring-boot:test-run -Dspring-boot.run.main-class=dev.redlock.sample.LoadDemo
 * </pre>
 *
 * Options (pass them with
 * {@code -Dspring-boot.run.arguments="--requests=400 --clients=64"}):
 * {@code --requests=200} purchases per endpoint, {@code --clients=32} parallel buyers,
 * {@code --stock=50} stock to start with, {@code --sku=apple}, and
 * {@code --targets=http://host:port,http://host:port} to fire at shops that are already
 * running instead (they must share their Redis nodes).
 */
public final class LoadDemo {

	private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

	private static final Duration RUN_DEADLINE = Duration.ofSeconds(60);

	private static final PrintStream out = System.out;

	private final List<URI> targets;

	private final Options options;

	private final HttpClient http;

	private LoadDemo(List<URI> targets, Options options, HttpClient http) {
		this.targets = targets;
		this.options = options;
		this.http = http;
	}

	public static void main(String[] args) {
		int exitCode;
		try {
			Options options = Options.parse(args);
			exitCode = options.targets().isEmpty() ? runWithOwnShops(options) : run(options.targets(), options);
		}
		catch (Exception ex) {
			System.err.println("Load demo failed: " + ex);
			for (Throwable cause = ex.getCause(); cause != null; cause = cause.getCause()) {
				System.err.println("  caused by: " + cause);
			}
			exitCode = 2;
		}
		// also ends the HTTP client's threads
		System.exit(exitCode);
	}

	private static int runWithOwnShops(Options options) throws Exception {
		try (RedisNodes nodes = RedisNodes.start(3)) {
			out.println("Started 3 Redis nodes: " + nodes.uris());
			List<ConfigurableApplicationContext> shops = new ArrayList<>();
			try {
				for (int i = 1; i <= 2; i++) {
					shops.add(startShop(i, nodes.uris()));
				}
				List<URI> targets = new ArrayList<>();
				for (ConfigurableApplicationContext shop : shops) {
					targets
						.add(URI.create("http://127.0.0.1:" + shop.getEnvironment().getProperty("local.server.port")));
				}
				out.println("Started 2 shops: " + targets);
				return run(targets, options);
			}
			finally {
				for (ConfigurableApplicationContext shop : shops) {
					shop.close();
				}
			}
		}
	}

	private static ConfigurableApplicationContext startShop(int instance, List<String> nodes) {
		// as command-line arguments: SpringApplicationBuilder.properties(..) are
		// defaults, below application.yml
		List<String> args = new ArrayList<>();
		args.add("--server.port=0");
		args.add("--spring.application.name=shop-" + instance);
		args.add("--spring.main.banner-mode=off");
		args.add("--logging.level.root=WARN");
		for (int i = 0; i < nodes.size(); i++) {
			args.add("--redlock.nodes[" + i + "]=" + nodes.get(i));
		}
		// nodes this demo started a moment ago hold nobody's locks: no restart quarantine
		// needed
		args.add("--redlock.restart-quarantine=0s");
		return new SpringApplicationBuilder(ShopApplication.class).run(args.toArray(String[]::new));
	}

	private static int run(List<URI> targets, Options options) throws Exception {
		HttpClient http = HttpClient.newBuilder()
			.version(HttpClient.Version.HTTP_1_1)
			.connectTimeout(Duration.ofSeconds(5))
			.executor(Executors.newFixedThreadPool(4))
			.build();
		LoadDemo demo = new LoadDemo(targets, options, http);
		out.printf("%nBuying '%s': %d purchases per endpoint, %d parallel buyers, stock %d, shops %s%n%n",
				options.sku(), options.requests(), options.clients(), options.stock(), targets);
		List<Row> rows = new ArrayList<>();
		rows.add(demo.fire("locked", "buy"));
		rows.add(demo.fire("unlocked", "buy-unlocked"));
		out.println();
		out.printf("%-10s %9s %5s %11s %9s %19s %15s %7s %8s%n", "endpoint", "requests", "sold", "stock left",
				"oversold", "rejected(sold out)", "rejected(busy)", "errors", "time");
		for (Row row : rows) {
			out.printf("%-10s %9d %5d %11d %9d %19d %15d %7d %7.1fs%n", row.endpoint(), row.requests(), row.sold(),
					row.stockLeft(), row.oversold(), row.soldOut(), row.busy(), row.errors(),
					row.elapsed().toMillis() / 1000.0);
		}
		out.println();
		Row locked = rows.get(0);
		Row unlocked = rows.get(1);
		if (unlocked.oversold() > 0) {
			out.printf("Without the lock the shop sold %d %s it did not have.%n", unlocked.oversold(),
					(unlocked.oversold() == 1) ? "item" : "items");
		}
		else {
			out.println("The unlocked run happened not to oversell this time (try more --clients).");
		}
		if (locked.oversold() == 0 && locked.errors() == 0) {
			out.println("With the lock: oversold 0. OK");
			return 0;
		}
		out.printf("With the lock: oversold %d, errors %d. FAILED%n", locked.oversold(), locked.errors());
		return 1;
	}

	private Row fire(String label, String endpoint) throws Exception {
		String sku = this.options.sku();
		post(this.targets.get(0).resolve("/api/skus/" + sku + "/reset?stock=" + this.options.stock()));
		Map<Integer, AtomicInteger> statuses = new LinkedHashMap<>();
		for (int status : new int[] { 200, 409, 423, 503 }) {
			statuses.put(status, new AtomicInteger());
		}
		AtomicInteger errors = new AtomicInteger();
		AtomicInteger next = new AtomicInteger();
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService buyers = Executors.newFixedThreadPool(this.options.clients());
		long deadline = System.nanoTime() + RUN_DEADLINE.toNanos();
		for (int c = 0; c < this.options.clients(); c++) {
			buyers.execute(() -> {
				try {
					start.await();
				}
				catch (InterruptedException ex) {
					return;
				}
				int n;
				while ((n = next.getAndIncrement()) < this.options.requests() && System.nanoTime() < deadline
						&& !Thread.currentThread().isInterrupted()) {
					// alternate between the shops: each request goes to the other one
					// than the previous
					URI shop = this.targets.get(n % this.targets.size());
					try {
						int status = post(shop.resolve("/api/skus/" + sku + "/" + endpoint));
						AtomicInteger counter = statuses.get(status);
						(counter != null ? counter : errors).incrementAndGet();
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
					catch (IOException | RuntimeException ex) {
						errors.incrementAndGet();
					}
				}
			});
		}
		long started = System.nanoTime();
		start.countDown();
		buyers.shutdown();
		if (!buyers.awaitTermination(RUN_DEADLINE.plus(REQUEST_TIMEOUT).toSeconds(), TimeUnit.SECONDS)) {
			buyers.shutdownNow();
			out.println(label + ": deadline reached, stopped the buyers");
		}
		Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
		int sent = Math.min(next.get(), this.options.requests());
		JsonNode level = JsonMapper.shared().readTree(get(this.targets.get(0).resolve("/api/skus/" + sku)));
		out.printf("%-8s done in %.1fs: %s%n", label, elapsed.toMillis() / 1000.0, level);
		return new Row(label, sent, level.path("sold").asLong(), level.path("stock").asLong(),
				level.path("oversold").asLong(), statuses.get(409).get(),
				statuses.get(423).get() + statuses.get(503).get(), errors.get(), elapsed);
	}

	private int post(URI uri) throws IOException, InterruptedException {
		HttpRequest request = HttpRequest.newBuilder(uri)
			.timeout(REQUEST_TIMEOUT)
			.POST(HttpRequest.BodyPublishers.noBody())
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
	}

	private String get(URI uri) throws IOException, InterruptedException {
		HttpRequest request = HttpRequest.newBuilder(uri).timeout(REQUEST_TIMEOUT).GET().build();
		HttpResponse<String> response = this.http.send(request, HttpResponse.BodyHandlers.ofString());
		if (response.statusCode() != 200) {
			throw new IOException("GET " + uri + " answered " + response.statusCode() + ": " + response.body());
		}
		return response.body();
	}

	private record Row(String endpoint, int requests, long sold, long stockLeft, long oversold, int soldOut, int busy,
			int errors, Duration elapsed) {
	}

	private record Options(int requests, int clients, int stock, String sku, List<URI> targets) {

		static Options parse(String[] args) {
			Map<String, String> values = new LinkedHashMap<>();
			for (String arg : args) {
				if (!arg.startsWith("--") || !arg.contains("=")) {
					throw new IllegalArgumentException("Expected --name=value, got '" + arg
							+ "'; options: --requests, --clients, --stock, --sku, --targets");
				}
				int eq = arg.indexOf('=');
				values.put(arg.substring(2, eq), arg.substring(eq + 1));
			}
			List<URI> targets = new ArrayList<>();
			for (String target : values.getOrDefault("targets", "").split(",")) {
				if (!target.isBlank()) {
					targets.add(URI.create(target.trim()));
				}
			}
			Options options = new Options(positive(values, "requests", 200), positive(values, "clients", 32),
					Integer.parseInt(values.getOrDefault("stock", "50")), values.getOrDefault("sku", "apple"), targets);
			values.keySet().removeAll(List.of("requests", "clients", "stock", "sku", "targets"));
			if (!values.isEmpty()) {
				throw new IllegalArgumentException("Unknown options " + values.keySet()
						+ "; options: --requests, --clients, --stock, --sku, --targets");
			}
			return options;
		}

		private static int positive(Map<String, String> values, String name, int defaultValue) {
			int value = Integer.parseInt(values.getOrDefault(name, Integer.toString(defaultValue)));
			if (value <= 0) {
				throw new IllegalArgumentException("--" + name + " must be positive, got " + value);
			}
			return value;
		}

	}

}
