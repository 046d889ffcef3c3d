package dev.redlock.core.internal.protocol;

import java.nio.charset.StandardCharsets;
import java.util.BitSet;

import org.jspecify.annotations.Nullable;

/**
 * How a lock's keys, and each node's marker, are stored on the nodes. When no voter is a
 * cluster (every voter a standalone or Sentinel-managed master), a lock is stored under
 * its key as it is, its fencing counter behind {@code {fence}}, and the marker is
 * {@code {fence}} ({@link #PLAIN}). When some voter is a cluster, each key a lock's
 * scripts declare must be in the lock key's slot, on every voter alike, so that one node
 * per voter serves them all, and each node's marker is a key in a slot it serves
 * ({@link #TAGGED}, see {@link ClusterKeys}), however many shards the cluster has.
 */
public enum KeyLayout {

	/**
	 * The lock key as it is, its counter {@code {fence}<lock key>}; lock keys starting
	 * with {@code {fence}} are refused, so that the two never meet.
	 */
	PLAIN {

		private static final byte[] FENCE_PREFIX = LockScripts.FENCE_KEY_PREFIX.getBytes(StandardCharsets.UTF_8);

		@Override
		public RawArgument storedKey(byte[] lockKey) {
			return RawArgument.wrap(lockKey);
		}

		@Override
		public RawArgument counterKey(RawArgument storedKey) {
			return concat(FENCE_PREFIX, storedKey.getRaw());
		}

		@Override
		public String counterPattern() {
			return LockScripts.FENCE_KEY_PREFIX + "*";
		}

		@Override
		public @Nullable String storedKeyOfCounter(String key) {
			// the marker is the prefix alone
			return (key.startsWith(LockScripts.FENCE_KEY_PREFIX)
					&& key.length() > LockScripts.FENCE_KEY_PREFIX.length())
							? key.substring(LockScripts.FENCE_KEY_PREFIX.length()) : null;
		}

		@Override
		public String markerKey(BitSet slots) {
			return LockScripts.FENCE_KEY_PREFIX;
		}

		@Override
		public @Nullable String refusal(byte[] lockKey) {
			return startsWith(lockKey, FENCE_PREFIX)
					? "starts with " + LockScripts.FENCE_KEY_PREFIX + ", which is reserved for fencing counters" : null;
		}

	},

	/**
	 * Every key of a lock in one hash tag ({@link ClusterKeys}): the lock {@code {<lock
	 * key>}}, its counter {@code {<lock key>}:fence}. Each node's marker is
	 * {@code {m<i>}:marker}, in a slot the node serves: never a lock's key nor a
	 * counter's, so no lock key is refused.
	 */
	TAGGED {

		private static final byte[] FENCE_SUFFIX = ClusterKeys.FENCE_SUFFIX.getBytes(StandardCharsets.UTF_8);

		@Override
		public RawArgument storedKey(byte[] lockKey) {
			return RawArgument.of(ClusterKeys.lockKey(new String(lockKey, StandardCharsets.UTF_8)));
		}

		@Override
		public RawArgument counterKey(RawArgument storedKey) {
			return concat(storedKey.getRaw(), FENCE_SUFFIX);
		}

		@Override
		public String counterPattern() {
			return "{*}*" + ClusterKeys.FENCE_SUFFIX;
		}

		@Override
		public @Nullable String storedKeyOfCounter(String key) {
			if (!key.endsWith(ClusterKeys.FENCE_SUFFIX)) {
				return null;
			}
			String stored = key.substring(0, key.length() - ClusterKeys.FENCE_SUFFIX.length());
			return (ClusterKeys.lockKeyOf(stored) != null) ? stored : null;
		}

		@Override
		public String markerKey(BitSet slots) {
			if (slots.isEmpty()) {
				throw new IllegalArgumentException("a node that serves no slot keeps no marker");
			}
			for (int i = 0;; i++) {
				String tag = "m" + i;
				if (slots.get(HashSlot.of(tag))) {
					return "{" + tag + "}" + MARKER_SUFFIX;
				}
			}
		}

		@Override
		public @Nullable String refusal(byte[] lockKey) {
			return null;
		}

	};

	/** What a node's marker key has after its tag, with the tagged layout. */
	static final String MARKER_SUFFIX = ":marker";

	/**
	 * The layout of a group of voters.
	 * @param tagged whether some voter is a cluster (or has several shard nodes)
	 */
	public static KeyLayout of(boolean tagged) {
		return tagged ? TAGGED : PLAIN;
	}

	/**
	 * Returns the key a lock is stored under.
	 * @param lockKey the lock key, prefix included, in UTF-8
	 */
	public abstract RawArgument storedKey(byte[] lockKey);

	/**
	 * Returns the key of a lock's fencing counter, in its stored key's slot.
	 * @param storedKey the key the lock is stored under
	 */
	public abstract RawArgument counterKey(RawArgument storedKey);

	/** Returns a {@code SCAN} pattern that every counter's key matches. */
	public abstract String counterPattern();

	/**
	 * Returns the stored key of the lock a counter counts for.
	 * @param key a key that matched {@link #counterPattern()}
	 * @return the lock's stored key, or {@code null} when the key is no counter
	 */
	public abstract @Nullable String storedKeyOfCounter(String key);

	/**
	 * Returns the key of a node's marker, in a slot the node serves: the same key for the
	 * same slots.
	 * @param slots the slots the node serves, at least one
	 */
	public abstract String markerKey(BitSet slots);

	/**
	 * Returns the key of the marker of a node that serves a range of slots.
	 * @param firstSlot the range's first slot
	 * @param lastSlot its last slot, included
	 */
	public String markerKey(int firstSlot, int lastSlot) {
		BitSet slots = new BitSet(HashSlot.SLOTS);
		slots.set(firstSlot, lastSlot + 1);
		return markerKey(slots);
	}

	/**
	 * Says why a lock key cannot be used, when it cannot: its keys would meet keys of
	 * another kind.
	 * @param lockKey the lock key, prefix included, in UTF-8
	 * @return the reason, to follow the key in a message, or {@code null}
	 */
	public abstract @Nullable String refusal(byte[] lockKey);

	private static boolean startsWith(byte[] bytes, byte[] prefix) {
		if (bytes.length < prefix.length) {
			return false;
		}
		for (int i = 0; i < prefix.length; i++) {
			if (bytes[i] != prefix[i]) {
				return false;
			}
		}
		return true;
	}

	private static RawArgument concat(byte[] first, byte[] second) {
		byte[] joined = new byte[first.length + second.length];
		System.arraycopy(first, 0, joined, 0, first.length);
		System.arraycopy(second, 0, joined, first.length, second.length);
		return RawArgument.wrap(joined);
	}

}
