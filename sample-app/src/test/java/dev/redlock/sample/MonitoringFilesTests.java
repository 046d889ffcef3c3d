package dev.redlock.sample;

import java.io.IOException;
import java.io.Reader;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.LockRequest;
import dev.redlock.core.Redlock;
import dev.redlock.core.ReleaseOutcome;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import io.micrometer.core.instrument.MeterRegistry;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Grafana dashboard ({@code docs/monitoring/redlock-dashboard.json}) and the
 * Prometheus alert rules ({@code docs/monitoring/redlock-alerts.yml}) that
 * {@code docs/operations.md} offers are well formed, and every metric they query exists
 * under that exact name in what a running application exposes to Prometheus.
 *
 * <p>
 * The application is the sample shop as {@link ShopConcurrencyTests} runs it: three real
 * local Redis nodes for the locks from {@link LocalRedisNodesConfiguration}, with the
 * histogram of {@code redlock.acquire} on (which the p99 panel and alert need) and the
 * restart quarantine on (5 s, so that quarantines happen and are counted). Before
 * scraping {@code /actuator/prometheus}, the test makes every meter exist for real: a
 * purchase over HTTP (acquisitions, waits, releases, node requests, the gauges), a lease
 * held past its TTL and then released (a lost lease, released as {@code expired}), and a
 * node whose data is flushed ({@code FLUSHALL}) and which is therefore put in quarantine
 * for data loss. Nothing is mocked and no meter is registered by hand: a name that the
 * starter does not produce, or that Micrometer spells differently for Prometheus (units,
 * {@code _total}, {@code _seconds_bucket}), fails the test.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = {
		// a healthy node can be descheduled for long on a loaded machine; this test
		// is not about timeouts
		"redlock.node-timeout=1s",
		// on, so that a node that forgets its data is quarantined and counted; every
		// TTL must fit within it
		"redlock.restart-quarantine=5s", "redlock.default-ttl=5s",
		"management.metrics.distribution.percentiles-histogram.redlock.acquire=true" })
@Import(LocalRedisNodesConfiguration.class)
class MonitoringFilesTests {

	private static final Path MONITORING = Path.of("..", "docs", "monitoring").toAbsolutePath().normalize();

	private static final Path DASHBOARD = MONITORING.resolve("redlock-dashboard.json");

	private static final Path ALERTS = MONITORING.resolve("redlock-alerts.yml");

	private static final Path OBSERVABILITY = Path.of("..", "docs", "observability.md").toAbsolutePath().normalize();

	/** A meter table's row: its first cell, a name in backticks. */
	private static final Pattern DOCUMENTED_METER = Pattern.compile("(?m)^\\| `(redlock\\.[a-z.]+)` \\|");

	private static final Pattern METRIC = Pattern.compile("redlock_[a-z_]+");

	private static final Pattern SAMPLE_NAME = Pattern.compile("^[a-zA-Z_:][a-zA-Z0-9_:]*");

	/** Generous: a loaded 2-core machine, and fresh nodes in quarantine at first. */
	private static final Duration PATIENCE = Duration.ofSeconds(90);

	private static final String LOST_LOCK = "monitoring.lost";

	private static final String PROBE_LOCK = "monitoring.probe";

	/**
	 * Names the files must query, so that a broken extraction of names cannot make the
	 * comparison with the scrape pass vacuously.
	 */
	private static final List<String> MUST_BE_QUERIED = List.of("redlock_acquire_seconds_count",
			"redlock_acquire_seconds_bucket", "redlock_wait_seconds_sum", "redlock_validity_remaining_milliseconds_sum",
			"redlock_held", "redlock_waiters", "redlock_release_total", "redlock_lease_lost_total",
			"redlock_node_requests_seconds_count", "redlock_node_quarantines_total");

	@LocalServerPort
	private int port;

	@Autowired
	private Redlock redlock;

	@Autowired
	private RedisNodes nodes;

	@Autowired
	private MeterRegistry registry;

	@Test
	void theDashboardIsAGrafanaDashboardOnAPrometheusDatasourceVariable() throws IOException {
		JsonNode dashboard = JsonMapper.shared().readTree(Files.readString(DASHBOARD));
		assertThat(dashboard.path("title").asString()).isNotBlank();
		assertThat(dashboard.path("uid").asString()).isNotBlank();
		assertThat(dashboard.path("schemaVersion").asInt()).isGreaterThanOrEqualTo(36);
		List<JsonNode> variables = new ArrayList<>();
		dashboard.path("templating").path("list").forEach(variables::add);
		assertThat(variables).anySatisfy((variable) -> {
			assertThat(variable.path("name").asString()).isEqualTo("datasource");
			assertThat(variable.path("type").asString()).isEqualTo("datasource");
			assertThat(variable.path("query").asString()).isEqualTo("prometheus");
		});
		assertThat(variables).anySatisfy((variable) -> {
			assertThat(variable.path("name").asString()).isEqualTo("lock");
			assertThat(variable.path("definition").asString())
				.isEqualTo("label_values(redlock_acquire_seconds_count, lock)");
		});
		Set<Integer> ids = new HashSet<>();
		List<JsonNode> panels = new ArrayList<>();
		dashboard.path("panels").forEach(panels::add);
		assertThat(panels).isNotEmpty();
		for (JsonNode panel : panels) {
			String title = panel.path("title").asString();
			assertThat(ids.add(panel.path("id").asInt())).as("unique id of panel '%s'", title).isTrue();
			JsonNode grid = panel.path("gridPos");
			assertThat(grid.path("w").asInt()).as("width of '%s'", title).isPositive();
			assertThat(grid.path("h").asInt()).as("height of '%s'", title).isPositive();
			assertThat(grid.path("x").asInt() + grid.path("w").asInt()).as("right edge of '%s'", title)
				.isLessThanOrEqualTo(24);
			if (panel.path("type").asString().equals("row")) {
				continue;
			}
			assertThat(panel.path("datasource").path("uid").asString()).as("datasource of '%s'", title)
				.isEqualTo("${datasource}");
			assertThat(panel.path("targets").isArray() && !panel.path("targets").isEmpty()).as("targets of '%s'", title)
				.isTrue();
			for (JsonNode target : panel.path("targets")) {
				assertThat(target.path("refId").asString()).as("refId in '%s'", title).isNotBlank();
				assertThat(target.path("datasource").path("uid").asString()).as("datasource in '%s'", title)
					.isEqualTo("${datasource}");
				assertBalanced(target.path("expr").asString(), title);
			}
		}
		assertThat(panels).anySatisfy((panel) -> {
			assertThat(targetExpressions(panel)).anyMatch((expr) -> expr.contains("redlock_acquire_seconds_bucket"));
			assertThat(panel.path("description").asString())
				.contains("management.metrics.distribution.percentiles-histogram.redlock.acquire=true");
		});
	}

	@Test
	void theAlertsAreAPrometheusRuleFile() throws IOException {
		List<Map<String, Object>> rules = alertRules();
		assertThat(rules).extracting((rule) -> rule.get("alert"))
			.doesNotHaveDuplicates()
			.contains("RedlockAcquireSlow", "RedlockLeaseLost", "RedlockNodeTimeouts", "RedlockNodeQuarantined",
					"RedlockNoQuorum");
		for (Map<String, Object> rule : rules) {
			Object alert = rule.get("alert");
			assertThat(alert).as("alert name").isInstanceOf(String.class);
			assertThat(rule.get("expr")).as("expr of %s", alert).isInstanceOf(String.class);
			assertBalanced((String) rule.get("expr"), (String) alert);
			if (rule.containsKey("for")) {
				assertThat(String.valueOf(rule.get("for"))).as("for of %s", alert).matches("\\d+[smhdw]");
			}
			assertThat(rule.get("labels")).as("labels of %s", alert)
				.isInstanceOfSatisfying(Map.class, (labels) -> assertThat(labels).containsKey("severity"));
			assertThat(rule.get("annotations")).as("annotations of %s", alert)
				.isInstanceOfSatisfying(Map.class,
						(annotations) -> assertThat(annotations).containsKeys("summary", "description"));
		}
	}

	@Test
	void everyMetricTheDashboardAndTheAlertsQueryIsInTheScrapeOfARunningShop() throws Exception {
		buyOneThroughTheShop();
		loseALease();
		quarantineANodeByFlushingIt();

		HttpResponse<String> scrape = get("/actuator/prometheus");
		assertThat(scrape.statusCode()).isEqualTo(200);
		Set<String> scraped = sampleNames(scrape.body());
		Set<String> byTheDashboard = queriedByTheDashboard();
		Set<String> byTheAlerts = queriedByTheAlerts();
		System.out.println("Metrics the dashboard queries: " + byTheDashboard);
		System.out.println("Metrics the alerts query: " + byTheAlerts);
		System.out.println("redlock metrics in the scrape: " + scraped.stream()
			.filter((name) -> name.startsWith("redlock_"))
			.collect(Collectors.toCollection(TreeSet::new)));
		SoftAssertions.assertSoftly((softly) -> {
			softly.assertThat(notIn(scraped, byTheDashboard))
				.as("metrics that %s queries but the scrape of /actuator/prometheus lacks", DASHBOARD.getFileName())
				.isEmpty();
			softly.assertThat(notIn(scraped, byTheAlerts))
				.as("metrics that %s queries but the scrape of /actuator/prometheus lacks", ALERTS.getFileName())
				.isEmpty();
		});
		Set<String> queried = new TreeSet<>(byTheDashboard);
		queried.addAll(byTheAlerts);
		assertThat(queried).as("metrics the two files query").containsAll(MUST_BE_QUERIED);
		// the meter tables of the observability page are a contract: every meter the
		// running shop made is in one of them
		Set<String> produced = this.registry.getMeters()
			.stream()
			.map((meter) -> meter.getId().getName())
			.filter((name) -> name.startsWith("redlock."))
			.map((name) -> name.endsWith(".active") ? name.substring(0, name.length() - ".active".length()) : name)
			.collect(Collectors.toCollection(TreeSet::new));
		assertThat(produced).as("meters of the running shop").contains("redlock.node.quarantines");
		assertThat(notIn(documentedMeters(), produced)).as("meters missing from the tables of %s", OBSERVABILITY)
			.isEmpty();
	}

	/** The names in the first column of the meter tables of the observability page. */
	private static Set<String> documentedMeters() throws IOException {
		Set<String> names = new TreeSet<>();
		Matcher row = DOCUMENTED_METER.matcher(Files.readString(OBSERVABILITY));
		while (row.find()) {
			names.add(row.group(1));
		}
		return names;
	}

	private static Set<String> notIn(Set<String> scraped, Set<String> queried) {
		Set<String> missing = new TreeSet<>(queried);
		missing.removeAll(scraped);
		return missing;
	}

	/** A purchase under {@code @DistributedLock}, once the fresh nodes count. */
	private void buyOneThroughTheShop() throws Exception {
		assertThat(post("/api/skus/apple/reset?stock=5").statusCode()).isEqualTo(200);
		// 503 while too many of the nodes, started a moment ago, are in quarantine
		HttpResponse<String> bought = poll("a purchase through the shop", () -> {
			HttpResponse<String> response = post("/api/skus/apple/buy");
			return (response.statusCode() == 200) ? Optional.of(response) : Optional.empty();
		});
		assertThat(bought.statusCode()).isEqualTo(200);
	}

	/**
	 * A lease kept past its TTL: released once the key is gone from every node, it is
	 * released as {@code expired} and counted as lost.
	 */
	private void loseALease() {
		LockRequest request = LockRequest.of("monitoring:lost", Duration.ofSeconds(2)).named(LOST_LOCK);
		Lease lease = poll("a lease of " + LOST_LOCK, () -> {
			try {
				return Optional.of(this.redlock.acquire(request, Duration.ofSeconds(2)));
			}
			catch (LockNotAcquiredException ex) {
				return Optional.empty();
			}
		});
		await("the validity of the lease to run out", () -> !lease.isValid());
		await("the key to expire on every lock node",
				() -> this.nodes.nodes()
					.subList(0, LocalRedisNodes.LOCK_NODE_COUNT)
					.stream()
					.allMatch((node) -> "0".equals(node.command("EXISTS", lease.redisKey()))));
		assertThat(lease.release()).isEqualTo(ReleaseOutcome.EXPIRED);
		assertThat(lease.isLost()).isTrue();
		assertThat(this.registry.get("redlock.lease.lost").tag("lock", LOST_LOCK).counter().count()).isEqualTo(1);
	}

	/**
	 * {@code FLUSHALL} on a lock node drops its marker key too: the next round that
	 * reaches it finds the marker gone and puts the node in quarantine for data loss.
	 */
	private void quarantineANodeByFlushingIt() {
		RedisNode flushed = this.nodes.node(0);
		String node = flushed.host() + ":" + flushed.port();
		flushed.command("FLUSHALL");
		LockRequest probe = LockRequest.of("monitoring:probe", Duration.ofSeconds(2)).named(PROBE_LOCK);
		await("a quarantine of " + node + " for data loss", () -> {
			this.redlock.tryAcquire(probe).ifPresent(Lease::release);
			return this.registry.find("redlock.node.quarantines")
				.tags("node", node, "reason", "data_loss")
				.counter() != null;
		});
	}

	/** Sample names (not families) in the Prometheus text format. */
	private static Set<String> sampleNames(String exposition) {
		Set<String> names = new HashSet<>();
		for (String line : exposition.split("\n")) {
			if (line.isBlank() || line.startsWith("#")) {
				continue;
			}
			Matcher name = SAMPLE_NAME.matcher(line);
			if (name.find()) {
				names.add(name.group());
			}
		}
		return names;
	}

	/** The names in the panels' expressions and the variables' queries. */
	private static Set<String> queriedByTheDashboard() throws IOException {
		Set<String> names = new TreeSet<>();
		collectQueried(JsonMapper.shared().readTree(Files.readString(DASHBOARD)), names);
		return names;
	}

	private static void collectQueried(JsonNode node, Set<String> names) {
		if (node.isObject()) {
			for (Map.Entry<String, JsonNode> field : node.properties()) {
				if (field.getValue().isString() && Set.of("expr", "query", "definition").contains(field.getKey())) {
					names.addAll(metricNames(field.getValue().asString()));
				}
				collectQueried(field.getValue(), names);
			}
		}
		else if (node.isArray()) {
			node.forEach((element) -> collectQueried(element, names));
		}
	}

	private static Set<String> queriedByTheAlerts() throws IOException {
		Set<String> names = new TreeSet<>();
		alertRules().forEach((rule) -> names.addAll(metricNames((String) rule.get("expr"))));
		return names;
	}

	@SuppressWarnings("unchecked")
	private static List<Map<String, Object>> alertRules() throws IOException {
		Map<String, Object> file;
		try (Reader reader = Files.newBufferedReader(ALERTS)) {
			file = new Yaml().load(reader);
		}
		assertThat(file).containsKey("groups");
		List<Map<String, Object>> groups = (List<Map<String, Object>>) file.get("groups");
		assertThat(groups).isNotEmpty();
		List<Map<String, Object>> rules = new ArrayList<>();
		for (Map<String, Object> group : groups) {
			assertThat(group.get("name")).as("group name").isInstanceOf(String.class);
			List<Map<String, Object>> ofGroup = (List<Map<String, Object>>) group.get("rules");
			assertThat(ofGroup).as("rules of group %s", group.get("name")).isNotEmpty();
			rules.addAll(ofGroup);
		}
		return rules;
	}

	private static List<String> targetExpressions(JsonNode panel) {
		List<String> expressions = new ArrayList<>();
		panel.path("targets").forEach((target) -> expressions.add(target.path("expr").asString()));
		return expressions;
	}

	private static Set<String> metricNames(String expression) {
		Set<String> names = new TreeSet<>();
		Matcher matcher = METRIC.matcher(expression);
		while (matcher.find()) {
			names.add(matcher.group());
		}
		return names;
	}

	/**
	 * A cheap check of PromQL: not empty, brackets of each kind balanced and nested, and
	 * quotes closed.
	 */
	private static void assertBalanced(String expression, String where) {
		assertThat(expression).as("expression in %s", where).isNotBlank();
		StringBuilder open = new StringBuilder();
		boolean quoted = false;
		for (char c : expression.toCharArray()) {
			if (c == '"') {
				quoted = !quoted;
			}
			else if (!quoted && "({[".indexOf(c) >= 0) {
				open.append(c);
			}
			else if (!quoted && ")}]".indexOf(c) >= 0) {
				char expected = "({[".charAt(")}]".indexOf(c));
				assertThat(open.length() > 0 && open.charAt(open.length() - 1) == expected)
					.as("'%s' closed out of place in %s: %s", c, where, expression)
					.isTrue();
				open.setLength(open.length() - 1);
			}
		}
		assertThat(quoted).as("an unclosed quote in %s: %s", where, expression).isFalse();
		assertThat(open).as("unclosed brackets in %s: %s", where, expression).isEmpty();
	}

	private static void await(String what, BooleanSupplier condition) {
		poll(what, () -> condition.getAsBoolean() ? Optional.of(Boolean.TRUE) : Optional.empty());
	}

	/**
	 * Tries until the attempt gives a value, every 50 ms, for at most {@link #PATIENCE}.
	 */
	private static <T> T poll(String what, ThrowingSupplier<Optional<T>> attempt) {
		long deadline = System.nanoTime() + PATIENCE.toNanos();
		while (true) {
			Optional<T> value;
			try {
				value = attempt.get();
			}
			catch (Exception ex) {
				throw new IllegalStateException("waiting for " + what, ex);
			}
			if (value.isPresent()) {
				return value.get();
			}
			if (System.nanoTime() - deadline > 0) {
				throw new AssertionError("gave up waiting for " + what + " after " + PATIENCE);
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
		}
	}

	private HttpResponse<String> post(String path) throws Exception {
		return ShopHttp.post(this.port, path);
	}

	private HttpResponse<String> get(String path) throws Exception {
		return ShopHttp.get(this.port, path, "text/plain");
	}

	@FunctionalInterface
	private interface ThrowingSupplier<T> {

		T get() throws Exception;

	}

}
