package dev.redlock.sample;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The live dashboard in a real headless Chromium (Debian's {@code chromium} and
 * {@code chromium-driver}; nothing is downloaded): it loads, shows three green nodes,
 * counts purchases, and shows a killed node in red.
 *
 * <p>
 * Run by the {@code browser} Maven profile, active where {@code /usr/bin/chromedriver}
 * exists (CI installs it). Other locations:
 * {@code -Dchrome.binary=… -Dchromedriver.path=…}.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@Import(LocalRedisNodesConfiguration.class)
class DashboardBrowserTests {

	private static final HttpClient HTTP = HttpClient.newHttpClient();

	private static final Pattern COUNT = Pattern.compile("\"statistic\":\"COUNT\",\"value\":([0-9.Ee+]+)");

	private static WebDriver browser;

	private static Path profile;

	@LocalServerPort
	private int port;

	@BeforeAll
	static void startBrowser() throws IOException {
		File binary = new File(System.getProperty("chrome.binary", "/usr/bin/chromium"));
		File driver = new File(System.getProperty("chromedriver.path", "/usr/bin/chromedriver"));
		if (!binary.canExecute() || !driver.canExecute()) {
			throw new IllegalStateException("The dashboard test needs Chromium and its driver: install them with "
					+ "'apt-get install chromium chromium-driver', or point -Dchrome.binary and -Dchromedriver.path "
					+ "at them (looked for " + binary + " and " + driver + ")");
		}
		profile = Files.createTempDirectory("redlock-dashboard-chromium");
		ChromeOptions options = new ChromeOptions();
		options.setBinary(binary);
		options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
				"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
				"--window-size=1280,800", "--user-data-dir=" + profile);
		ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(driver)
			.usingAnyFreePort()
			.build();
		browser = new ChromeDriver(service, options);
	}

	@AfterAll
	static void stopBrowser() throws IOException {
		if (browser != null) {
			browser.quit();
		}
		if (profile != null) {
			try (var files = Files.walk(profile)) {
				files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
			}
		}
	}

	@Test
	void showsNodesCountsPurchasesAndAKilledNode() throws Exception {
		WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(20));
		browser.get("http://127.0.0.1:" + this.port + "/");

		// the page refreshes on its own: what it shows is waited for, never read once
		wait.until((page) -> page.findElements(By.cssSelector("#nodes .node.up")).size() == 3
				&& page.findElements(By.cssSelector("#nodes .node.down")).isEmpty());
		wait.until((page) -> page.findElements(By.cssSelector("#stock tr")).size() == 3);

		long acquiredBefore = acquiredTotal();
		long finishedBefore = acquisitions(null);
		AtomicBoolean rateShown = new AtomicBoolean();
		click(wait, By.id("buy-locked"));
		// each of the 50 buys ends acquired or, on a machine too busy to hand the lock on
		// within a buy's 2 s wait, refused: the page must show what the server counted,
		// whatever that is. The rate shows for a second after each tick that saw
		// acquisitions, so it is looked for while they happen
		new WebDriverWait(browser, Duration.ofSeconds(90)).until((page) -> {
			noteRate(page, rateShown);
			return acquisitions(null) >= finishedBefore + 50;
		});
		long acquired = acquisitions("acquired");
		assertThat(acquired).as("buys that got the lock").isGreaterThan(acquiredBefore);
		wait.until((page) -> {
			noteRate(page, rateShown);
			return acquiredTotal() >= acquired && rateShown.get();
		});
		wait.until((page) -> page.findElement(By.id("p99")).getText().contains("ms"));
		saveScreenshot("dashboard.png");

		click(wait, By.cssSelector("#nodes .node:nth-child(2) button"));
		wait.until((page) -> page.findElements(By.cssSelector("#nodes .node.down")).size() == 1
				&& page.findElements(By.cssSelector("#nodes .node.up")).size() == 2);
		saveScreenshot("dashboard-node-down.png");

		click(wait, By.cssSelector("#nodes .node.down button"));
		wait.until((page) -> page.findElements(By.cssSelector("#nodes .node.up")).size() == 3);
	}

	/**
	 * Clicks, finding the element again if the page's refresh replaced it between finding
	 * and clicking.
	 */
	private static void click(WebDriverWait wait, By target) {
		wait.ignoring(StaleElementReferenceException.class).until((page) -> {
			page.findElement(target).click();
			return true;
		});
	}

	/** Remembers that the page showed a rate of acquisitions above zero. */
	private static void noteRate(WebDriver page, AtomicBoolean shown) {
		if (!page.findElement(By.id("rate-acquired")).getText().equals("0.0")) {
			shown.set(true);
		}
	}

	/**
	 * Finished acquisitions as the server counts them (the {@code redlock.acquire}
	 * timer), with the given outcome or any.
	 */
	private long acquisitions(@Nullable String outcome) {
		String query = (outcome != null) ? "?tag=outcome:" + outcome : "";
		HttpRequest request = HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/actuator/metrics/redlock.acquire" + query))
			.timeout(Duration.ofSeconds(10))
			.build();
		try {
			HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
			if (response.statusCode() == 404) {
				// nothing recorded yet
				return 0;
			}
			Matcher count = COUNT.matcher(response.body());
			assertThat(count.find()).as("a count in %s", response.body()).isTrue();
			return (long) Double.parseDouble(count.group(1));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while reading the metrics", ex);
		}
	}

	private static long acquiredTotal() {
		return Long.parseLong(browser.findElement(By.id("acquired-total")).getText().trim());
	}

	private static void saveScreenshot(String name) throws IOException {
		File shot = ((ChromeDriver) browser).getScreenshotAs(OutputType.FILE);
		Path target = Path.of("target", name);
		Files.createDirectories(target.getParent());
		Files.copy(shot.toPath(), target, StandardCopyOption.REPLACE_EXISTING);
	}

}
