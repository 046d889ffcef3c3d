package dev.redlock.benchmarks;

import java.util.Locale;

import dev.redlock.core.RedlockSettings;

/**
 * The transport of the clients the benchmarks that are not JMH benchmarks build
 * ({@code HandOff}, {@code ManyLeases}): the default, or the one named by
 * {@code -Dredlock.bench.transport=pipelined|shared|pooled}.
 */
final class Transports {

	private Transports() {
	}

	static RedlockSettings.Transport chosen() {
		String name = System.getProperty("redlock.bench.transport", "");
		return name.isBlank() ? RedlockSettings.defaults().transport()
				: RedlockSettings.Transport.valueOf(name.trim().toUpperCase(Locale.ROOT));
	}

}
