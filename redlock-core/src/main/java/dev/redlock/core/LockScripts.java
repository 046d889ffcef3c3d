package dev.redlock.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The Lua scripts that touch a lock key only while it still holds the caller's value, with their SHA-1 digests for
 * {@code EVALSHA}.
 */
final class LockScripts {

	/** Deletes the key if it holds ARGV[1]: returns 1 when deleted, 0 when the key is gone or someone else's. */
	static final Script RELEASE = new Script("""
			if redis.call('get', KEYS[1]) == ARGV[1] then
			  return redis.call('del', KEYS[1])
			end
			return 0
			""");

	/**
	 * Sets a new TTL of ARGV[2] ms if the key holds ARGV[1]: returns 1 when extended, 0 when the key is gone or
	 * someone else's. An expired key is never re-created.
	 */
	static final Script EXTEND = new Script("""
			if redis.call('get', KEYS[1]) == ARGV[1] then
			  return redis.call('pexpire', KEYS[1], ARGV[2])
			end
			return 0
			""");

	private LockScripts() {
	}

	/** The number of keys every script takes, as sent with {@code EVALSHA}. */
	static final RawArgument ONE_KEY = RawArgument.of(1);

	/** A script and its SHA-1 hex digest, both encoded once for every call. */
	record Script(RawArgument source, RawArgument sha1) {

		Script(String source) {
			this(RawArgument.of(source), RawArgument.of(sha1Hex(source)));
		}

		private static String sha1Hex(String source) {
			try {
				byte[] digest = MessageDigest.getInstance("SHA-1").digest(source.getBytes(StandardCharsets.UTF_8));
				return HexFormat.of().formatHex(digest);
			}
			catch (NoSuchAlgorithmException ex) {
				throw new IllegalStateException("SHA-1 is required by the Java platform", ex);
			}
		}

	}

}
