package dev.redlock.core;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A service's first second after a deploy: a {@code Redlock} built in a fresh JVM, with
 * the default settings, serves a burst of single attempts at once.
 */
@WithRedisNodes(count = 5)
class ColdStartTests {

	private static final int THREADS = 48;

	private static final int BUSY_THREADS = 2;

	@Test
	void aBurstOfSingleAttemptsOnARedlockJustBuiltInAFreshJvmAllAcquire(RedisNodes nodes) throws Exception {
		List<String> command = new ArrayList<>(List.of(javaExecutable(), "-cp", testClassPath(),
				ColdBurst.class.getName(), String.valueOf(THREADS), String.valueOf(BUSY_THREADS)));
		command.addAll(nodes.uris());
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		try {
			assertThat(process.waitFor(2, TimeUnit.MINUTES)).as("the burst finished within 2 minutes").isTrue();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			System.out.println("[cold burst] " + output.lines().filter((line) -> !line.contains(" WARN ")).toList());
			assertThat(output).contains("acquired " + THREADS + " of " + THREADS);
			assertThat(process.exitValue()).as(output).isZero();
		}
		finally {
			process.destroyForcibly();
		}
	}

	private static String javaExecutable() {
		return Path.of(System.getProperty("java.home"), "bin", "java").toString();
	}

	/**
	 * The test class path, also when Surefire runs the tests from a manifest-only jar.
	 */
	private static String testClassPath() throws IOException {
		String surefire = System.getProperty("surefire.test.class.path");
		return (surefire != null && !surefire.isBlank()) ? surefire : System.getProperty("java.class.path");
	}

}
