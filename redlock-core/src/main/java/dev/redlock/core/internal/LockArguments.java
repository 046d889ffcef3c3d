package dev.redlock.core.internal;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.redlock.core.RedlockSettings;
import dev.redlock.core.internal.protocol.KeyLayout;
import dev.redlock.core.internal.protocol.RawArgument;

/**
 * Checks what callers give a {@code Redlock} or a {@code Lease} before any network call
 * (lock names, resources, TTLs, wait times), with an {@link IllegalArgumentException}
 * that names the argument at fault, and forms the Redis key of a resource.
 */
public final class LockArguments {

	private static final Duration ONE_MILLISECOND = Duration.ofMillis(1);

	private final RedlockSettings settings;

	private final String keyPrefix;

	private final byte[] keyPrefixBytes;

	private final KeyLayout keys;

	/**
	 * @param settings the key prefix and the limits
	 * @param keys how the nodes store a lock's keys
	 */
	public LockArguments(RedlockSettings settings, KeyLayout keys) {
		this.settings = settings;
		this.keys = keys;
		this.keyPrefix = settings.keyPrefix();
		this.keyPrefixBytes = this.keyPrefix.getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * Forms the Redis key of a resource, refusing it before any network call when it is
	 * empty or when the key, prefix included, is longer than the limit: the limit bounds
	 * what a caller (perhaps feeding user input into a key) can make every node store.
	 * @throws IllegalArgumentException if the resource is empty or the key too long
	 */
	public RawArgument keyFor(String resource) {
		if (resource == null || resource.isEmpty()) {
			throw new IllegalArgumentException("Lock resource name must not be null or empty");
		}
		int limit = this.settings.maxKeyLength();
		// one byte or more per char: a key with more chars than the limit is refused
		// without being encoded
		int chars = this.keyPrefix.length() + resource.length();
		byte[] bytes = (chars > limit) ? null : encodeKey(resource);
		if (bytes == null || bytes.length > limit) {
			int atLeast = (bytes != null) ? bytes.length : chars;
			String start = (resource.length() > 40) ? resource.substring(0, 40) + "…" : resource;
			throw new IllegalArgumentException("Lock key for resource '" + start + "' is longer than the limit of "
					+ limit + " bytes in UTF-8, key prefix included (maxKeyLength): at least " + atLeast + " bytes");
		}
		String refusal = this.keys.refusal(bytes);
		if (refusal != null) {
			throw new IllegalArgumentException("Lock key '" + this.keyPrefix + resource + "' " + refusal
					+ ": use another resource name or key prefix");
		}
		return this.keys.storedKey(bytes);
	}

	/**
	 * The key's UTF-8 bytes. An ASCII resource, the usual kind, is copied behind the
	 * prefix's bytes char by char, with no string built on the way.
	 */
	private byte[] encodeKey(String resource) {
		byte[] prefix = this.keyPrefixBytes;
		byte[] key = new byte[prefix.length + resource.length()];
		System.arraycopy(prefix, 0, key, 0, prefix.length);
		for (int i = 0; i < resource.length(); i++) {
			char c = resource.charAt(i);
			if (c >= 0x80) {
				return (this.keyPrefix + resource).getBytes(StandardCharsets.UTF_8);
			}
			key[prefix.length + i] = (byte) c;
		}
		return key;
	}

	/**
	 * Checks a TTL and truncates it to what is sent to Redis (whole milliseconds), so
	 * validity is computed from the TTL the nodes actually apply.
	 * @throws IllegalArgumentException if the TTL is below 1 ms, within the clock drift
	 * allowance, longer than the restart quarantine (when it is on), or beyond the range
	 * of the monotonic clock (about 292 years)
	 */
	public Duration usableTtl(Duration ttl) {
		if (ttl == null || ttl.isNegative() || ttl.compareTo(ONE_MILLISECOND) < 0) {
			throw new IllegalArgumentException("Lock TTL must be at least 1 ms, was " + ttl);
		}
		toNanos(ttl, "Lock TTL");
		// whole milliseconds, as PX takes them; most TTLs are already
		Duration millis = (ttl.getNano() % 1_000_000 == 0) ? ttl : Duration.ofMillis(ttl.toMillis());
		long driftNanos = this.settings.driftNanosFor(millis.toNanos());
		if (millis.toNanos() <= driftNanos) {
			throw new IllegalArgumentException("Lock TTL must be longer than the clock drift allowance of "
					+ TimeUnit.NANOSECONDS.toMillis(driftNanos) + " ms (ttl × clockDriftFactor + 2 ms"
					+ (this.settings.restartQuarantine().isZero() ? "" : " + 3 × clockTolerance") + "), was " + ttl);
		}
		Duration quarantine = this.settings.restartQuarantine();
		if (!quarantine.isZero() && millis.compareTo(quarantine) > 0) {
			throw new IllegalArgumentException("Lock TTL must not exceed the restart quarantine of " + quarantine
					+ ", was " + ttl + ": a node that restarts counts again after the quarantine, and must not "
					+ "count while it may have forgotten a lock that is still valid (raise restartQuarantine, or "
					+ "turn it off and run Redis with appendfsync always)");
		}
		return millis;
	}

	/**
	 * Checks a lock name, which listeners and metrics get.
	 * @throws IllegalArgumentException if it is null or blank
	 */
	public static void checkName(String name) {
		if (name == null || name.isBlank()) {
			throw new IllegalArgumentException(
					"Lock name must not be null or blank, was " + ((name == null) ? "null" : "'" + name + "'"));
		}
	}

	/**
	 * Checks a wait time and returns it in nanoseconds.
	 * @throws IllegalArgumentException if it is negative, or too long to count in
	 * nanoseconds (about 292 years)
	 */
	public static long waitNanos(Duration waitTime) {
		if (waitTime == null || waitTime.isNegative()) {
			throw new IllegalArgumentException("Lock wait time must be zero or positive, was " + waitTime);
		}
		return toNanos(waitTime, "Lock wait time");
	}

	/**
	 * Converts a duration to nanoseconds for the monotonic clock.
	 * @throws IllegalArgumentException naming the argument if it exceeds the clock's
	 * range (about 292 years)
	 */
	public static long toNanos(Duration duration, String what) {
		try {
			return duration.toNanos();
		}
		catch (ArithmeticException ex) {
			throw new IllegalArgumentException(what + " must be at most " + Duration.ofNanos(Long.MAX_VALUE)
					+ " (the range of the monotonic clock), was " + duration, ex);
		}
	}

}
