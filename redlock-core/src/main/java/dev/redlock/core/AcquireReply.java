package dev.redlock.core;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Reads the reply of an acquisition that also reads the node's clock and marker: either
 * the fenced script's {@code {count or 0, seconds, microseconds, marker or nil,
 * generation}} ({@link LockScripts#ACQUIRE_FENCED}), or the list of replies of
 * {@code SET NX PX}, {@code TIME} and {@code GET {fence}} written together (see
 * {@link AcquireRound}). Anything of another shape (a stale reply of another command)
 * reads as no grant and no clock.
 */
final class AcquireReply {

	/** The marker as read by a client that may not read it. */
	static final byte[] UNREADABLE = { '-' };

	private static final byte[] OK = { 'O', 'K' };

	private AcquireReply() {
	}

	/**
	 * Whether the reply has either shape.
	 * @param value the reply
	 */
	static boolean isAcquireReply(@Nullable Object value) {
		return isScriptReply(value) || isPipelinedReply(value);
	}

	private static boolean isScriptReply(@Nullable Object value) {
		return value instanceof List<?> list && list.size() >= 4 && list.get(0) instanceof Long
				&& list.get(1) instanceof byte[] && list.get(2) instanceof byte[];
	}

	private static boolean isPipelinedReply(@Nullable Object value) {
		return value instanceof List<?> list && list.size() == 3
				&& (list.get(0) == null || (list.get(0) instanceof byte[] ok && java.util.Arrays.equals(ok, OK)))
				&& (list.get(1) instanceof List<?> || list.get(1) instanceof JedisDataException);
	}

	/**
	 * The grant: 1 for a plain one, the counter for a fenced one, 0 when taken.
	 * @return the value, or 0 for a reply of another shape
	 */
	static long grant(@Nullable Object value) {
		if (isScriptReply(value)) {
			return (Long) ((List<?>) value).get(0);
		}
		if (isPipelinedReply(value)) {
			return (((List<?>) value).get(0) != null) ? 1 : 0;
		}
		return 0;
	}

	/**
	 * The node's clock when it ran the command, in microseconds since the epoch.
	 * @return the time, or -1 when it is not known (another shape, or {@code TIME}
	 * refused)
	 */
	static long nodeMicros(@Nullable Object value) {
		Object seconds;
		Object micros;
		if (isScriptReply(value)) {
			seconds = ((List<?>) value).get(1);
			micros = ((List<?>) value).get(2);
		}
		else if (isPipelinedReply(value) && ((List<?>) value).get(1) instanceof List<?> time && time.size() == 2) {
			seconds = time.get(0);
			micros = time.get(1);
		}
		else {
			return -1;
		}
		long wholeSeconds = digits(seconds);
		long fraction = digits(micros);
		return (wholeSeconds < 0 || fraction < 0) ? -1 : wholeSeconds * 1_000_000 + fraction;
	}

	/**
	 * The number a reply's ASCII digits spell, read without making a string (every
	 * acquisition reads two per node).
	 * @return the number, or -1 for anything else
	 */
	private static long digits(@Nullable Object element) {
		if (!(element instanceof byte[] bytes) || bytes.length == 0 || bytes.length > 18) {
			return -1;
		}
		long number = 0;
		for (byte digit : bytes) {
			if (digit < '0' || digit > '9') {
				return -1;
			}
			number = number * 10 + (digit - '0');
		}
		return number;
	}

	/**
	 * The node's marker as read with the grant: its value, {@code null} when it was gone,
	 * {@link #UNREADABLE} when this client may not read it.
	 */
	static @Nullable Object marker(@Nullable Object value) {
		if (isScriptReply(value)) {
			return ((List<?>) value).get(3);
		}
		if (isPipelinedReply(value)) {
			Object marker = ((List<?>) value).get(2);
			return (marker instanceof JedisDataException) ? UNREADABLE : marker;
		}
		return null;
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

}
