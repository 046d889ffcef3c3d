package dev.redlock.core.internal.protocol;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import redis.clients.jedis.args.Rawable;

/**
 * A command argument encoded once and written as it is to every node: the lock's key and
 * value, a script's digest. Unlike Jedis's own raw arguments it does not copy the bytes,
 * so the caller must not change them afterwards.
 */
public final class RawArgument implements Rawable {

	private final byte[] bytes;

	private RawArgument(byte[] bytes) {
		this.bytes = bytes;
	}

	/** Wraps bytes that nobody changes afterwards. */
	public static RawArgument wrap(byte[] bytes) {
		return new RawArgument(bytes);
	}

	public static RawArgument of(String text) {
		return new RawArgument(text.getBytes(StandardCharsets.UTF_8));
	}

	public static RawArgument of(long number) {
		return of(Long.toString(number));
	}

	@Override
	public byte[] getRaw() {
		return this.bytes;
	}

	int length() {
		return this.bytes.length;
	}

	/**
	 * Its identity as a string: its bytes, one character each ({@code ISO-8859-1} maps
	 * every byte to a character and back), so that it can key maps and be turned back
	 * into the same bytes.
	 */
	public String id() {
		return new String(this.bytes, StandardCharsets.ISO_8859_1);
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof RawArgument that && Arrays.equals(this.bytes, that.bytes);
	}

	@Override
	public int hashCode() {
		return Arrays.hashCode(this.bytes);
	}

	@Override
	public String toString() {
		return new String(this.bytes, StandardCharsets.UTF_8);
	}

}
