package dev.redlock.core.internal.protocol;

import org.jspecify.annotations.Nullable;

/**
 * Where a lock's keys go on a cluster voter: every key a lock's scripts touch shares one
 * hash tag, so they are in one slot, on one shard (a script may not declare keys of two
 * slots). The tag is the whole lock key when it is not empty and has no {@code }}, else
 * the SHA-1 of the lock key in hex. A hash tag of the caller's inside the lock key is not
 * honoured: every lock hashes by its whole key, so locks that share a tag (a tenant's,
 * say) still spread over the shards.
 *
 * <p>
 * A stored key is {@code {tag}} followed by what tells its role and lock apart:
 * <ul>
 * <li>lock key: nothing when the tag is the lock key ({@code {orders:42}}), else
 * {@code =} and the lock key ({@code {3f…}=orders:a}b});</li>
 * <li>fencing counter: {@code :fence} after the same.</li>
 * </ul>
 * The first {@code }} of a stored key ends its tag, so a stored key tells its tag and the
 * rest apart: two locks' keys never meet (the {@code =} keeps the empty lock key, whose
 * tag is its digest, from meeting the lock named by that digest), and no lock key needs
 * to be refused. A rest that starts with anything else, such as {@code :marker}, is never
 * a lock's: free for keys of the starter's own in a tag's slot.
 */
public final class ClusterKeys {

	/** What a counter's stored key has after its lock's. */
	static final String FENCE_SUFFIX = ":fence";

	private ClusterKeys() {
	}

	/**
	 * Returns the key a lock is stored under on a cluster voter.
	 * @param lockKey the lock key, prefix included
	 * @return the stored key
	 */
	public static String lockKey(String lockKey) {
		return taggedByItself(lockKey) ? "{" + lockKey + "}" : "{" + LockScripts.sha1Hex(lockKey) + "}=" + lockKey;
	}

	/**
	 * Returns the key of a lock's fencing counter on a cluster voter, in the slot of
	 * {@link #lockKey(String)}.
	 * @param lockKey the lock key, prefix included
	 * @return the stored key of its counter
	 */
	public static String fenceKey(String lockKey) {
		return lockKey(lockKey) + FENCE_SUFFIX;
	}

	/**
	 * Returns the lock key a stored key is a lock's under, when it is one.
	 * @param storedKey a key as stored on a node
	 * @return the lock key, or {@code null} when the key is no lock's (a counter, a
	 * marker, another application's)
	 */
	public static @Nullable String lockKeyOf(String storedKey) {
		if (!storedKey.startsWith("{")) {
			return null;
		}
		int close = storedKey.indexOf('}');
		if (close < 0) {
			return null;
		}
		String lockKey = (close == storedKey.length() - 1) ? storedKey.substring(1, close)
				: storedKey.startsWith("=", close + 1) ? storedKey.substring(close + 2) : null;
		return (lockKey != null && lockKey(lockKey).equals(storedKey)) ? lockKey : null;
	}

	/** Whether the lock key can be its own tag: not empty, and no {@code }} in it. */
	private static boolean taggedByItself(String lockKey) {
		return !lockKey.isEmpty() && lockKey.indexOf('}') < 0;
	}

}
