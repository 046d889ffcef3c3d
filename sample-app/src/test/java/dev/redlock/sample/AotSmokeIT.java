package dev.redlock.sample;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.redlock.test.RedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The AOT-processed jar ({@code -Paot}), started as a user would, with
 * {@code -Dspring.aot.enabled=true}: it starts in AOT mode, its health is UP, a locked
 * buy works, and the lock's TTL is the one given only at runtime
 * ({@code --shop.buy-ttl=7s}, where the build saw 10 s). Run by {@code mvn -Paot verify}.
 */
class AotSmokeIT {

	private static final Duration STARTUP = Duration.ofSeconds(90);

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private RedisNodes nodes;

	private Process shop;

	private Path log;

	@AfterEach
	void stop() throws InterruptedException {
		if (this.shop != null) {
			this.shop.destroy();
			if (!this.shop.waitFor(20, TimeUnit.SECONDS)) {
				this.shop.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			}
		}
		if (this.nodes != null) {
			this.nodes.close();
		}
	}

	@Test
	void theAotProcessedJarServesLockedBuysWithTheTtlGivenAtRuntime() throws Exception {
		Path jar = Path.of("target", "redlock-sample-app.jar");
		assertThat(jar).as("the jar built by mvn -Paot package").exists();
		this.nodes = RedisNodes.start(3);
		int port = freePort();
		List<String> command = new ArrayList<>(List.of(
				Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Dspring.aot.enabled=true", "-jar",
				jar.toString(), "--server.port=" + port, "--redlock.restart-quarantine=0s", "--shop.buy-ttl=7s"));
		for (int i = 0; i < 3; i++) {
			command.add("--redlock.nodes[" + i + "]=" + this.nodes.node(i).uri());
		}
		this.log = Files.createTempFile("aot-shop", ".log");
		this.shop = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(this.log.toFile()).start();
		String base = "http://127.0.0.1:" + port;

		awaitHealthUp(base);
		assertThat(Files.readString(this.log)).as("the shop's log").contains("Starting AOT-processed");
		String bought = send(HttpRequest.newBuilder(URI.create(base + "/api/skus/apple/buy"))
			.POST(HttpRequest.BodyPublishers.noBody())
			.build());
		assertThat(bought).contains("\"bought\":true");
		String validity = send(
				HttpRequest.newBuilder(URI.create(base + "/actuator/metrics/redlock.validity.remaining")).build());
		// the build saw 10 s: a 7 s TTL leaves less than 7 s, and (7 s less the drift
		// allowance and one round) more than 6.5 s
		assertThat(meanOf(validity)).as("validity left at acquisition, in ms: %s", validity)
			.isGreaterThan(6_500.0)
			.isLessThan(7_000.0);
	}

	private void awaitHealthUp(String base) throws Exception {
		long deadline = System.nanoTime() + STARTUP.toNanos();
		String last = "";
		while (System.nanoTime() - deadline < 0) {
			if (!this.shop.isAlive()) {
				fail("the shop exited with %d:%n%s", this.shop.exitValue(), Files.readString(this.log));
			}
			try {
				last = send(HttpRequest.newBuilder(URI.create(base + "/actuator/health")).build());
				if (last.contains("\"status\":\"UP\"")) {
					return;
				}
			}
			catch (IOException ex) {
				last = ex.toString();
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
		}
		fail("the shop's health was not UP within %s (last: %s):%n%s", STARTUP, last, Files.readString(this.log));
	}

	private String send(HttpRequest request) throws IOException, InterruptedException {
		HttpResponse<String> response = this.http.send(request, HttpResponse.BodyHandlers.ofString());
		return response.statusCode() + " " + response.body();
	}

	/** The mean of a distribution summary from its Actuator metrics page. */
	private static double meanOf(String metric) {
		return statistic(metric, "TOTAL") / statistic(metric, "COUNT");
	}

	private static double statistic(String metric, String statistic) {
		Matcher value = Pattern.compile("\"statistic\":\"" + statistic + "\",\"value\":([0-9.Ee+-]+)").matcher(metric);
		assertThat(value.find()).as("a %s statistic in %s", statistic, metric).isTrue();
		return Double.parseDouble(value.group(1));
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

}
