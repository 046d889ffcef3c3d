package dev.redlock.core.internal.quarantine;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.QuarantineReason;

/**
 * Compares what a node showed of its losses when its marker was last written with what it
 * shows now ({@link NodeReport#evidence()}:
 * {@code <run_id>:<flushes>:<debugs>:<evicted>}): a count that rose means the node
 * dropped keys since, without its marker going.
 */
final class Evidence {

	private Evidence() {
	}

	/**
	 * @param recorded the marker's evidence
	 * @param now the node's evidence now
	 * @return what the node lost since, or {@code null} when nothing, or when the two
	 * cannot be compared (either unknown, or another run of the server: its restart is
	 * judged by its uptime)
	 */
	static @Nullable QuarantineCause compare(String recorded, String now) {
		String[] then = recorded.split(":");
		String[] current = now.split(":");
		if (then.length != 4 || current.length != 4 || !then[0].equals(current[0])) {
			return null;
		}
		long[] before = new long[3];
		long[] after = new long[3];
		try {
			for (int i = 0; i < 3; i++) {
				before[i] = Long.parseLong(then[i + 1]);
				after[i] = Long.parseLong(current[i + 1]);
			}
		}
		catch (NumberFormatException ex) {
			return null;
		}
		if (after[0] < before[0] || after[1] < before[1] || after[2] < before[2]) {
			return new QuarantineCause(QuarantineReason.DATA_LOSS, "its statistics were reset (CONFIG "
					+ "RESETSTAT) since its marker was written: what it dropped meanwhile is unknown");
		}
		if (after[1] > before[1]) {
			return new QuarantineCause(QuarantineReason.ROLLBACK,
					"DEBUG was called on it since its marker was written (DEBUG RELOAD loads a dump, maybe older)");
		}
		if (after[0] > before[0]) {
			return new QuarantineCause(QuarantineReason.DATA_LOSS,
					"FLUSHALL, FLUSHDB or SWAPDB was called on it since its marker was written");
		}
		if (after[2] > before[2]) {
			return new QuarantineCause(QuarantineReason.DATA_LOSS,
					"it evicted " + (after[2] - before[2]) + " keys since its marker was written");
		}
		return null;
	}

}
