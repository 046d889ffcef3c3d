package dev.redlock.core;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Reads the reply of an acquisition script ({@link LockScripts#ACQUIRE},
 * {@link LockScripts#ACQUIRE_FENCED}): {@code {granted or count, seconds, microseconds,
 * marker or nil[, generation]}}. Anything of another shape (a stale reply of another
 * command) reads as no grant and no clock.
 */
final class AcquireReply {

	private AcquireReply() {
	}

	/**
	 * Whether the script answered in its own shape.
	 * @param value the reply
	 */
	static boolean isAcquireReply(@Nullable Object value) {
		return value instanceof List<?> list && list.size() >= 4 && list.get(0) instanceof Long
				&& list.get(1) instanceof byte[] && list.get(2) instanceof byte[];
	}

	/**
	 * The first element: 1 for a plain grant, the counter for a fenced one, 0 when taken.
	 * @return the value, or 0 for a reply of another shape
	 */
	static long grant(@Nullable Object value) {
		return isAcquireReply(value) ? (Long) ((List<?>) value).get(0) : 0;
	}

	/**
	 * The node's clock when it ran the script, in microseconds since the epoch.
	 * @return the time, or -1 for a reply of another shape
	 */
	static long nodeMicros(@Nullable Object value) {
		if (!isAcquireReply(value)) {
			return -1;
		}
		List<?> list = (List<?>) value;
		try {
			return Long.parseLong(text(list.get(1))) * 1_000_000 + Long.parseLong(text(list.get(2)));
		}
		catch (NumberFormatException ex) {
			return -1;
		}
	}

	/** The node's marker as read by the script: {@code byte[]}, or {@code null}. */
	static @Nullable Object marker(@Nullable Object value) {
		return isAcquireReply(value) ? ((List<?>) value).get(3) : null;
	}

	/**
	 * The generation recorded with the fencing counter, empty when none (a counter no
	 * quorum confirmed yet since it was made, or one from before markers).
	 */
	static String generation(@Nullable Object value) {
		if (value instanceof List<?> list && list.size() >= 5 && list.get(4) instanceof byte[] bytes) {
			return new String(bytes, StandardCharsets.UTF_8);
		}
		return "";
	}

	private static String text(@Nullable Object element) {
		return (element instanceof byte[] bytes) ? new String(bytes, StandardCharsets.US_ASCII) : "";
	}

}
