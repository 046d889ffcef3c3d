package dev.redlock.core;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Promela model of the forgetful-node guards ({@code src/test/promela/redlock.pml},
 * described in {@code docs/model.md}) checked by spin, exhaustively: the small
 * configuration, in its three parts (clock faults, losses of data, fencing tokens), has
 * no violation with every guard on; removing any one guard, opening a documented window,
 * or dropping an assumption that stands for a finding gives a counterexample. Each run
 * makes {@code pan} in a directory of its own (removed afterwards) and prints its state
 * count, depth, memory and time; the runs start together, on a thread per processor.
 * Needs spin and gcc: run by the Maven profile {@code model-check}, on where
 * {@code /usr/bin/spin} exists.
 */
@Tag("model-check")
class PromelaModelTests {

	private static final Path MODEL = Path.of(System.getProperty("basedir", "."), "src", "test", "promela",
			"redlock.pml");

	/** Far above any run here (the slowest takes about half a minute). */
	private static final long TIMEOUT_SECONDS = 600;

	/** pan stops there rather than take the machine's memory (it then reports it). */
	private static final int MEMORY_LIMIT_MB = 2048;

	/** The small configuration's parts, the longest first. */
	private static final List<String> PARTS = List.of("FENCE", "CLOCK", "DATA");

	/** Each guard, and the part whose faults show what it guards against. */
	private static final List<List<String>> GUARDS = List.of(List.of("GUARD_CONSENSUS", "CLOCK"),
			List.of("GUARD_ALLOWANCE", "CLOCK"), List.of("GUARD_PENDING", "CLOCK"), List.of("GUARD_RECORD", "CLOCK"),
			List.of("GUARD_GONE", "DATA"), List.of("GUARD_EPOCH", "DATA"), List.of("GUARD_HEARTBEAT", "DATA"),
			List.of("GUARD_EVIDENCE", "DATA"), List.of("GUARD_COUNTSFROM", "DATA"), List.of("GUARD_CONFIRMED", "FENCE"),
			List.of("GUARD_CONFIRM_ROUND", "FENCE"), List.of("GUARD_RESEED_QUORUM", "FENCE"),
			List.of("GUARD_RESEED_OK", "FENCE"));

	/** The documented windows and assumptions, and the part that shows each. */
	private static final List<List<String>> WINDOWS = List.of(List.of("EXCUSE_RELOAD_WINDOW", "DATA"),
			List.of("EXCUSE_RESTORE_WINDOW", "DATA"), List.of("ASSUME_OLD_SNAPSHOT", "DATA"),
			List.of("ASSUME_PROBED_STATES", "CLOCK"));

	/** The open findings, and a configuration that shows each quickly. */
	private static final List<List<String>> FINDINGS = List.of(
			List.of("ASSUME_NO_LAUNDERING", "-DDATA -DONE_FAULTY=1 -DB_START_ANY=1 -DB_PROBES=1"),
			List.of("ASSUME_NO_BEHIND_LOSS",
					"-DDATA -DONE_FAULTY=1 -DCLOCK_FAULTS=1 -DFAULTS=3 -DRELOAD_FAULTS=0 -DRESTORE_FAULTS=0"));

	/**
	 * Every run, started at once on as many threads as the machine has processors: most
	 * of a run is spin and gcc, one process each, so two cores halve the class's time.
	 */
	private static final Map<String, CompletableFuture<Verification>> RUNS = new ConcurrentHashMap<>();

	private static ExecutorService runner;

	@BeforeAll
	static void startEveryRun() {
		runner = Executors.newFixedThreadPool(Math.max(1, Runtime.getRuntime().availableProcessors()));
		PARTS.forEach((part) -> start(true, "-D" + part));
		GUARDS.forEach((guard) -> start(false, "-D" + guard.get(1), "-D" + guard.get(0) + "=0"));
		WINDOWS.forEach((window) -> start(false, "-D" + window.get(1), "-D" + window.get(0) + "=0"));
		FINDINGS.forEach((finding) -> start(false, finding(finding.get(0), finding.get(1))));
	}

	@AfterAll
	static void stopRunner() {
		runner.shutdownNow();
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("parts")
	void everyGuardOnLeavesNoViolation(String part) throws Exception {
		Verification run = result("-D" + part);
		assertThat(run.complete()).as("search complete\n%s", run.output()).isTrue();
		assertThat(run.errors()).as("errors\n%s", run.output()).isZero();
		// not vacuous: the removals below find their counterexamples in these spaces
		assertThat(run.states()).isGreaterThan(100_000);
	}

	@ParameterizedTest(name = "{0}=0 ({1})")
	@MethodSource("guards")
	void eachGuardRemovedGivesACounterexample(String guard, String part) throws Exception {
		assertViolation(result("-D" + part, "-D" + guard + "=0"));
	}

	/**
	 * The documented windows and assumptions: excused or assumed in the runs above, each
	 * gives a second holder when let happen.
	 */
	@ParameterizedTest(name = "{0}=0 ({1})")
	@MethodSource("windows")
	void eachDocumentedWindowShowsItsViolation(String window, String part) throws Exception {
		assertViolation(result("-D" + part, "-D" + window + "=0"));
	}

	/**
	 * What the model found with every guard on and the code does not close yet
	 * (docs/model.md, "Findings"), each excluded by an assumption in the runs above: let
	 * happen, each breaks the property. When the code closes one, the model follows it
	 * and its row goes.
	 */
	@ParameterizedTest(name = "{0}=0")
	@MethodSource("findings")
	void eachOpenFindingBreaksThePropertyWhenLetHappen(String assumption, String configuration) throws Exception {
		assertViolation(result(finding(assumption, configuration)));
	}

	static List<String> parts() {
		return PARTS;
	}

	static Stream<Arguments> guards() {
		return GUARDS.stream().map((guard) -> Arguments.of(guard.toArray()));
	}

	static Stream<Arguments> windows() {
		return WINDOWS.stream().map((window) -> Arguments.of(window.toArray()));
	}

	static Stream<Arguments> findings() {
		return FINDINGS.stream().map((finding) -> Arguments.of(finding.toArray()));
	}

	private static String[] finding(String assumption, String configuration) {
		List<String> flags = new ArrayList<>(List.of(configuration.split(" ")));
		flags.add("-D" + assumption + "=0");
		return flags.toArray(String[]::new);
	}

	private static void assertViolation(Verification run) {
		assertThat(run.errors()).as("errors\n%s", run.output()).isPositive();
		assertThat(run.output()).contains("assertion violated");
	}

	private static void start(boolean exhaustive, String... macros) {
		RUNS.put(String.join(" ", macros), CompletableFuture.supplyAsync(() -> {
			try {
				return verify(exhaustive, macros);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("interrupted", ex);
			}
		}, runner));
	}

	private static Verification result(String... macros) throws Exception {
		CompletableFuture<Verification> run = RUNS.get(String.join(" ", macros));
		assertThat(run).as("a run started for %s", String.join(" ", macros)).isNotNull();
		try {
			return run.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof Error error) {
				throw error;
			}
			throw (ex.getCause() instanceof Exception cause) ? cause : ex;
		}
	}

	/**
	 * Generates, compiles and runs the verifier for the model under the given macros, in
	 * a directory of its own, removed afterwards.
	 * @param exhaustive whether to compile it optimised, with a large hash table (a run
	 * over the whole space); else quickly, for a run that stops at its first
	 * counterexample
	 */
	private static Verification verify(boolean exhaustive, String... macros) throws IOException, InterruptedException {
		Path dir = Files.createTempDirectory("redlock-model-");
		try {
			List<String> spin = new ArrayList<>(List.of("spin", "-a"));
			spin.addAll(List.of(macros));
			spin.add(MODEL.toAbsolutePath().toString());
			run(dir, spin);
			run(dir, List.of("gcc", exhaustive ? "-O2" : "-O0", "-DSAFETY", "-DCOLLAPSE", "-DMEMLIM=" + MEMORY_LIMIT_MB,
					"-o", "pan", "pan.c"));
			// -m: depth far beyond the model's (a few hundred steps); -w24: a 16M-slot
			// table, -w20 (1M) where the first counterexample ends the run
			String output = run(dir, List.of("./pan", "-m1000000", exhaustive ? "-w24" : "-w20"));
			Verification result = Verification.of(String.join(" ", macros), output);
			System.out.println(result);
			return result;
		}
		finally {
			try (Stream<Path> files = Files.walk(dir)) {
				files.sorted(Comparator.reverseOrder()).forEach((file) -> file.toFile().delete());
			}
		}
	}

	private static String run(Path dir, List<String> command) throws IOException, InterruptedException {
		Path log = dir.resolve(command.get(0).replace("./", "") + ".out");
		Process process = new ProcessBuilder(command).directory(dir.toFile())
			.redirectErrorStream(true)
			.redirectOutput(log.toFile())
			.start();
		try {
			if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
				throw new AssertionError(String.join(" ", command) + " ran for more than " + TIMEOUT_SECONDS + " s");
			}
			String output = Files.readString(log);
			// pan exits 0 whether it found errors or not; spin and gcc fail with a status
			assertThat(process.exitValue()).as("%s\n%s", command, output).isZero();
			return output;
		}
		finally {
			process.destroyForcibly();
		}
	}

	/** What pan reported. */
	private record Verification(String macros, long errors, long states, long depth, double memoryMb, double seconds,
			boolean complete, String output) {

		static Verification of(String macros, String output) {
			// an incomplete search says so (the memory bound reached, the depth bound
			// hit)
			boolean complete = output.contains("State-vector") && !output.contains("Search not completed")
					&& !output.contains("max search depth too small");
			return new Verification(macros, (long) decimal(output, "errors: (\\d+)"),
					(long) decimal(output, "([\\d.e+]+) states, stored"),
					(long) decimal(output, "depth reached (\\d+)"),
					decimal(output, "([\\d.]+)\\s+total actual memory usage"),
					decimal(output, "pan: elapsed time ([\\d.e+]+) seconds"), complete, output);
		}

		private static double decimal(String output, String pattern) {
			Matcher matcher = Pattern.compile(pattern).matcher(output);
			return matcher.find() ? Double.parseDouble(matcher.group(1)) : -1;
		}

		@Override
		public String toString() {
			return String.format("spin %s: errors %d, %d states, depth %d, %.0f MB, %.1f s%s", this.macros, this.errors,
					this.states, this.depth, this.memoryMb, this.seconds, this.complete ? "" : " (INCOMPLETE)");
		}

	}

}
