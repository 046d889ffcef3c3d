package dev.redlock.test;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Signals and waits for the child processes the test kit starts ({@code redis-server}):
 * only ever a process this JVM started, by its PID.
 */
final class ChildProcesses {

	private ChildProcesses() {
	}

	/** Sends a signal to our own child process with {@code kill -SIG pid}. */
	static void signal(Process p, String signal) {
		try {
			Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).redirectErrorStream(true)
				.start();
			String output = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
			if (!waitFor(kill, Duration.ofSeconds(10)) || kill.exitValue() != 0) {
				throw new IllegalStateException("kill -" + signal + " " + p.pid() + " failed: " + output);
			}
		}
		catch (IOException e) {
			throw new UncheckedIOException("could not run kill -" + signal + " " + p.pid(), e);
		}
	}

	/**
	 * On Linux, waits (up to 1 s) until /proc shows the process in the given state;
	 * elsewhere returns at once.
	 */
	static void awaitProcState(long pid, char state) {
		Path stat = Path.of("/proc", Long.toString(pid), "stat");
		if (!Files.isReadable(stat)) {
			return;
		}
		long deadline = System.nanoTime() + Duration.ofSeconds(1).toNanos();
		while (System.nanoTime() - deadline < 0) {
			try {
				String content = Files.readString(stat);
				int close = content.lastIndexOf(')');
				if (close < 0 || close + 2 >= content.length() || content.charAt(close + 2) == state) {
					return;
				}
			}
			catch (IOException e) {
				return;
			}
			sleep(Duration.ofMillis(5));
		}
	}

	static boolean waitFor(Process p, Duration timeout) {
		boolean interrupted = false;
		long deadline = System.nanoTime() + timeout.toNanos();
		try {
			while (true) {
				try {
					return p.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
				}
				catch (InterruptedException e) {
					interrupted = true;
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	static void sleep(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException e) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("interrupted while waiting for redis-server", new InterruptedIOException());
		}
	}

}
