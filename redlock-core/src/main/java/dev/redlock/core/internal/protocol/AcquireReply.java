package dev.redlock.core.internal.protocol;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Reads the reply of an acquisition that is more than a {@code SET}: the fenced script's
 * {@code {count or 0, seconds, microseconds, marker or nil, generation}}
 * ({@link LockScripts#ACQUIRE_FENCED}); the list of replies of {@code SET NX PX},
 * {@code TIME} and {@code GET {fence}} written together; or, for a fenced lock without
 * the restart quarantine, the counting script's {@code {count, value}}
 * ({@link LockScripts#ACQUIRE_COUNTED}). Anything of another shape (a stale reply of
 * another command) reads as no grant and no clock.
 */
public final class AcquireReply {

	/** The marker as read by a client that may not read it (an ACL denial). */
	public static final byte[] UNREADABLE = { '-' };

	/**
	 * The marker as read when the node could not read it for another reason: a cluster
	 * node whose marker's slot is served elsewhere ({@code MOVED}), or a cluster that is
	 * down. Nothing is known of the node's marker then.
	 */
	public static final byte[] NOT_READ = { '?' };

	private static final byte[] OK = { 'O', 'K' };

	private AcquireReply() {
	}

	/**
	 * Whether a node's reply grants a lock, checked against the command that was sent: a
	 * plain lock's {@code SET NX} answers {@code OK}, alone or first in its list, a
	 * fenced one a token count of at least 1. Any other reply is no grant, whatever it
	 * is.
	 * @param value the reply
	 * @param fenced whether a fenced acquisition was sent
	 * @return {@code true} for a grant
	 */
	public static boolean grants(@Nullable Object value, boolean fenced) {
		long grant = grant(value);
		return fenced ? grant > 0 : ((grant == 1 && !isCountedReply(value)) || isOk(value));
	}

	/**
	 * Whether it is the {@code OK} of a {@code SET} (an acquisition without quarantine).
	 */
	private static boolean isOk(@Nullable Object value) {
		return value instanceof byte[] bytes && Arrays.equals(bytes, OK);
	}

	/**
	 * Whether a node's reply refuses the acquisition, leaving nothing of ours there: nil,
	 * or a reply that says the lock was taken.
	 * @param value the reply
	 */
	public static boolean refuses(@Nullable Object value) {
		return value == null || (isAcquireReply(value) && grant(value) == 0);
	}

	/**
	 * Whether the reply has one of the three shapes.
	 * @param value the reply
	 */
	static boolean isAcquireReply(@Nullable Object value) {
		return isScriptReply(value) || isPipelinedReply(value) || isCountedReply(value);
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
	 * Whether it is the counting script's {@code {count, value}}: the reply of a fenced
	 * acquisition only.
	 * @param value the reply
	 */
	static boolean isCountedReply(@Nullable Object value) {
		return value instanceof List<?> list && list.size() == 2 && list.get(0) instanceof Long
				&& list.get(1) instanceof byte[];
	}

	/**
	 * Whether a counting script's reply names a lock value other than the caller's: then
	 * it is not the reply to the caller's command, and no grant, whatever it says. Only
	 * that script names the value; for the other replies, {@code false}.
	 * @param value the reply
	 * @param lockValue the caller's value
	 */
	public static boolean readAnotherValue(@Nullable Object value, byte[] lockValue) {
		return isCountedReply(value) && !Arrays.equals((byte[]) ((List<?>) value).get(1), lockValue);
	}

	/** The reply of a {@code SET NX}: {@code OK}, or nil when the key was taken. */
	private static boolean isSetReply(@Nullable Object reply) {
		return reply == null || (reply instanceof byte[] ok && Arrays.equals(ok, OK));
	}

	/**
	 * The grant: 1 for a plain one, for a fenced one the count of the counter once the
	 * grant raised it (the token it would have), 0 when taken.
	 * @return the value, 0 for a reply of another shape, -1 for a fenced grant whose
	 * counter is not a number (not a grant, yet the lock key is ours)
	 */
	public static long grant(@Nullable Object value) {
		if (isScriptReply(value) || isCountedReply(value)) {
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
	public static long nodeMicros(@Nullable Object value) {
		if (isScriptReply(value)) {
			return micros(((List<?>) value).get(1), ((List<?>) value).get(2));
		}
		if (isPipelinedReply(value)) {
			return timeMicros(((List<?>) value).get(1));
		}
		return -1;
	}

	/**
	 * Reads the reply of {@code TIME}: seconds and microseconds.
	 * @return the time in microseconds since the epoch, or -1 for anything else
	 */
	public static long timeMicros(@Nullable Object reply) {
		if (reply instanceof List<?> time && time.size() == 2) {
			return micros(time.get(0), time.get(1));
		}
		return -1;
	}

	private static long micros(@Nullable Object seconds, @Nullable Object micros) {
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
	 * {@link #UNREADABLE} when this client may not read it, {@link #NOT_READ} when the
	 * node could not read it.
	 */
	public static @Nullable Object marker(@Nullable Object value) {
		if (isScriptReply(value)) {
			return ((List<?>) value).get(3);
		}
		if (isPipelinedReply(value)) {
			Object marker = ((List<?>) value).get(2);
			return markerRead(marker);
		}
		return null;
	}

	/**
	 * A marker as a command read it: its value or {@code null}; for an error reply,
	 * {@link #UNREADABLE} if the client may not read it, else {@link #NOT_READ}.
	 * @param read the reply to {@code GET}, an exception standing for an error reply
	 */
	public static @Nullable Object markerRead(@Nullable Object read) {
		if (read instanceof JedisAccessControlException) {
			return UNREADABLE;
		}
		return (read instanceof Exception) ? NOT_READ : read;
	}

	/** Whether a marker as read says this client may not read it. */
	public static boolean isUnreadable(@Nullable Object marker) {
		return marker instanceof byte[] bytes && bytes.length == 1 && bytes[0] == UNREADABLE[0];
	}

	/** Whether a marker as read says the node could not read it. */
	public static boolean isNotRead(@Nullable Object marker) {
		return marker instanceof byte[] bytes && bytes.length == 1 && bytes[0] == NOT_READ[0];
	}

	/**
	 * The generation recorded with the fencing counter, empty when none (a counter no
	 * quorum confirmed yet since it was made, or one from before markers), as the script
	 * read it: only its grants are judged.
	 */
	public static String generation(@Nullable Object value) {
		if (isScriptReply(value) && ((List<?>) value).size() >= 5 && ((List<?>) value).get(4) instanceof byte[] bytes) {
			return new String(bytes, StandardCharsets.UTF_8);
		}
		return "";
	}

}
