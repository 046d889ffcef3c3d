package dev.redlock.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * A wall clock one {@code redis-server} process sees through libfaketime (Debian's
 * {@code faketime} package): an offset from the real time, read from a file at every
 * clock read, so that it can be stepped while the server runs. The offset is written to
 * the millisecond, with a point ({@code +0.750s}), which libfaketime reads as a fraction
 * of a second (it reads no comma). Works with the embedded Redis 6.2 binary; Debian's
 * Redis 7.0.15 hangs at startup under it.
 */
final class FakeClock {

	/**
	 * System property naming the libfaketime library; Debian's multi-threaded one by
	 * default.
	 */
	static final String LIBRARY_PROPERTY = "redlock.test.libfaketime";

	static final String DEFAULT_LIBRARY = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

	private final Path library;

	private final Path offsetFile;

	private long offsetMillis;

	private FakeClock(Path library, Path offsetFile) {
		this.library = library;
		this.offsetFile = offsetFile;
	}

	/**
	 * A clock at real time, kept in a file of the given directory.
	 * @throws IllegalStateException if libfaketime is not installed
	 */
	static FakeClock in(Path dir) {
		Path library = library();
		FakeClock clock = new FakeClock(library, dir.resolve("faketime"));
		clock.write();
		return clock;
	}

	/** The libfaketime library to preload. */
	static Path library() {
		Path library = Path.of(System.getProperty(LIBRARY_PROPERTY, DEFAULT_LIBRARY));
		if (!Files.isReadable(library)) {
			throw new IllegalStateException("Steppable clocks need libfaketime at " + library
					+ ": install Debian's faketime package (apt-get install faketime), or name the library with -D"
					+ LIBRARY_PROPERTY + "=...");
		}
		return library;
	}

	/** The environment that puts a process on this clock. */
	Map<String, String> environment() {
		return Map.of("LD_PRELOAD", this.library.toString(), "FAKETIME_TIMESTAMP_FILE", this.offsetFile.toString(),
				"FAKETIME_NO_CACHE", "1");
	}

	/**
	 * Moves the clock; the process sees it at its next clock read.
	 * @param by how far, forward when positive; to the millisecond
	 */
	synchronized void step(Duration by) {
		this.offsetMillis += by.toMillis();
		write();
	}

	/** The offset as libfaketime reads it: a sign, seconds, a point and milliseconds. */
	static String offsetText(long millis) {
		long magnitude = Math.abs(millis);
		String fraction = String.valueOf(1000 + magnitude % 1000).substring(1);
		return ((millis < 0) ? "-" : "+") + magnitude / 1000 + "." + fraction + "s";
	}

	private void write() {
		String offset = offsetText(this.offsetMillis);
		try {
			Files.writeString(this.offsetFile, offset + "\n", StandardCharsets.US_ASCII);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("could not write " + this.offsetFile, ex);
		}
	}

}
