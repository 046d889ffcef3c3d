package dev.redlock.core.internal.protocol;

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

	private static final String FENCE_SUFFIX = ":fence";

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

	/** Whether the lock key can be its own tag: not empty, and no {@code }} in it. */
	private static boolean taggedByItself(String lockKey) {
		return !lockKey.isEmpty() && lockKey.indexOf('}') < 0;
	}

}
