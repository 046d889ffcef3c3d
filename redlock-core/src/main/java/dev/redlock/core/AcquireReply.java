package dev.redlock.core;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Reads the reply of an acquisition that is more than a {@code SET}: the fenced script's
 * {@code {count or 0, seconds, microseconds, marker or nil, generation}}
 * ({@link LockScripts#ACQUIRE_FENCED}); the list of replies of {@code SET NX PX},
 * {@code TIME} and {@code GET {fence}} written together; or, for a fenced lock without
 * the restart quarantine, those of {@code SET NX PX} and the {@code MGET} of the lock key
 * and its fencing counter (see {@link AcquireRound}). Anything of another shape (a stale
 * reply of another command) reads as no grant and no clock.
 */
final class AcquireReply {

	/** The marker as read by a client that may not read it. */
	static final byte[] UNREADABLE = { '-' };

	private static final byte[] OK = { 'O', 'K' };

	private AcquireReply() {
	}

	/**
	 * Whether the reply has one of the three shapes.
	 * @param value the reply
	 */
	static boolean isAcquireReply(@Nullable Object value) {
		return isScriptReply(value) || isPipelinedReply(value) || isCounterReply(value);
	}

	private static boolean isScriptReply(@Nullable Object value) {
		return value instanceof List<?> list && list.size() >= 4 && list.get(0) instanceof Long
				&& list.get(1) instanceof byte[] && list.get(2) instanceof byte[];
	}

	private static boolean isPipelinedReply(@Nullable Object value) {
		return value instanceof List<?> list && list.size() == 3 && isSetReply(list.get(0))
				&& (list.get(1) instanceof List<?> || list.get(1) instanceof JedisDataException);
	}

	/**
	 * Whether it is the replies of {@code SET NX PX} and {@code MGET} of the lock key and
	 * its counter: the reply of a fenced acquisition only.
	 * @param value the reply
	 */
	static boolean isCounterReply(@Nullable Object value) {
		return value instanceof List<?> list && list.size() == 2 && isSetReply(list.get(0))
				&& list.get(1) instanceof List<?> read && read.size() == 2 && isBulkOrNil(read.get(0))
				&& isBulkOrNil(read.get(1));
	}

	private static boolean isBulkOrNil(@Nullable Object reply) {
		return reply == null || reply instanceof byte[];
	}

	/** The lock key's value and the counter as a counter reply read them. */
	private static List<?> readBack(Object counterReply) {
		return (List<?>) ((List<?>) counterReply).get(1);
	}

	/**
	 * Whether a fenced grant read back a lock value other than the caller's: then it is
	 * not the reply to the caller's command, and no grant, whatever it says. Only the
	 * reply that reads the counter with {@code MGET} reads the value back; for the
	 * others, {@code false}.
	 * @param value the reply
	 * @param lockValue the caller's value
	 */
	static boolean readAnotherValue(@Nullable Object value, byte[] lockValue) {
		return isCounterReply(value) && ((List<?>) value).get(0) != null
				&& !(readBack(value).get(0) instanceof byte[] read && Arrays.equals(read, lockValue));
	}

	/** The reply of a {@code SET NX}: {@code OK}, or nil when the key was taken. */
	private static boolean isSetReply(@Nullable Object reply) {
		return reply == null || (reply instanceof byte[] ok && Arrays.equals(ok, OK));
	}

	/**
	 * The grant: 1 for a plain one, for a fenced one the count its token would have (the
	 * counter as it was, plus one), 0 when taken.
	 * @return the value, 0 for a reply of another shape, -1 for a fenced grant whose
	 * counter is not a count of up to 18 digits (not a grant, yet the lock key is ours)
	 */
	static long grant(@Nullable Object value) {
		if (isScriptReply(value)) {
			return (Long) ((List<?>) value).get(0);
		}
		if (isPipelinedReply(value)) {
			return (((List<?>) value).get(0) != null) ? 1 : 0;
		}
		if (isCounterReply(value)) {
			if (((List<?>) value).get(0) == null) {
				return 0;
			}
			long count = (readBack(value).get(1) instanceof byte[] counter) ? digits(counter, countLength(counter)) : 0;
			return (count < 0) ? -1 : count + 1;
		}
		return 0;
	}

	/**
	 * How many bytes of a stored counter, {@code <count>} or
	 * {@code <count> <generation>}, are its count.
	 */
	private static int countLength(byte[] counter) {
		for (int i = 0; i < counter.length; i++) {
			if (counter[i] == ' ') {
				return i;
			}
		}
		return counter.length;
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
		long wholeSeconds = (seconds instanceof byte[] bytes) ? digits(bytes, bytes.length) : -1;
		long fraction = (micros instanceof byte[] bytes) ? digits(bytes, bytes.length) : -1;
		return (wholeSeconds < 0 || fraction < 0) ? -1 : wholeSeconds * 1_000_000 + fraction;
	}

	/**
	 * The number the first {@code length} bytes of a reply spell in ASCII digits, read
	 * without making a string (every acquisition reads two per node).
	 * @return the number, or -1 for anything else
	 */
	private static long digits(byte[] bytes, int length) {
		if (length == 0 || length > 18) {
			return -1;
		}
		long number = 0;
		for (int i = 0; i < length; i++) {
			byte digit = bytes[i];
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
	 * quorum confirmed yet since it was made, or one from before markers), as the script
	 * read it: only its grants are judged.
	 */
	static String generation(@Nullable Object value) {
		if (isScriptReply(value) && ((List<?>) value).size() >= 5 && ((List<?>) value).get(4) instanceof byte[] bytes) {
			return new String(bytes, StandardCharsets.UTF_8);
		}
		return "";
	}

}
