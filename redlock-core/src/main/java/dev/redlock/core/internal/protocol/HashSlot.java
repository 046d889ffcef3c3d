package dev.redlock.core.internal.protocol;

import java.nio.charset.StandardCharsets;

/**
 * The hash slot of a key in a Redis or Valkey Cluster: CRC16 (the XMODEM variant:
 * polynomial 0x1021, initial value 0, no reflection) of the key's hash tag, modulo
 * {@value #SLOTS}. The hash tag is what lies between the key's first {@code {} and the
 * first {@code }} after it, when that is not empty; a key without one is hashed whole.
 * Keys with the same hash tag are in the same slot, so one script may touch them all.
 */
public final class HashSlot {

	/** How many hash slots a cluster has. */
	public static final int SLOTS = 16384;

	/**
	 * The first slot of one of so many equal ranges of the slots, as a new cluster's
	 * primaries serve them; the range of {@code shard} ends before that of
	 * {@code shard + 1}.
	 * @param shard the range, from 0; {@code shards} for the end of the last
	 * @param shards how many ranges
	 */
	public static int equalRangeStart(int shard, int shards) {
		return (int) ((long) SLOTS * shard / shards);
	}

	private static final int[] TABLE = crcTable();

	private HashSlot() {
	}

	/**
	 * Returns a key's slot.
	 * @param key the key, as sent
	 * @return its slot, from 0 to 16,383
	 */
	public static int of(byte[] key) {
		int from = 0;
		int to = key.length;
		int open = indexOf(key, (byte) '{', 0);
		if (open >= 0) {
			int close = indexOf(key, (byte) '}', open + 1);
			if (close > open + 1) {
				from = open + 1;
				to = close;
			}
		}
		return crc16(key, from, to) & (SLOTS - 1);
	}

	/**
	 * Returns a key's slot.
	 * @param key the key, sent as UTF-8
	 * @return its slot, from 0 to 16,383
	 */
	public static int of(String key) {
		return of(key.getBytes(StandardCharsets.UTF_8));
	}

	private static int indexOf(byte[] bytes, byte wanted, int from) {
		for (int i = from; i < bytes.length; i++) {
			if (bytes[i] == wanted) {
				return i;
			}
		}
		return -1;
	}

	private static int crc16(byte[] bytes, int from, int to) {
		int crc = 0;
		for (int i = from; i < to; i++) {
			crc = ((crc << 8) ^ TABLE[((crc >>> 8) ^ bytes[i]) & 0xff]) & 0xffff;
		}
		return crc;
	}

	private static int[] crcTable() {
		int[] table = new int[256];
		for (int i = 0; i < 256; i++) {
			int crc = i << 8;
			for (int bit = 0; bit < 8; bit++) {
				crc = ((crc & 0x8000) != 0) ? ((crc << 1) ^ 0x1021) : (crc << 1);
			}
			table[i] = crc & 0xffff;
		}
		return table;
	}

}
