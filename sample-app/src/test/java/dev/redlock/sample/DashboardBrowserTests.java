package dev.redlock.sample;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Comparator;

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

		long before = acquiredTotal();
		click(wait, By.id("buy-locked"));
		wait.until((page) -> acquiredTotal() >= before + 50);
		wait.until((page) -> !page.findElement(By.id("rate-acquired")).getText().equals("0.0"));
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
