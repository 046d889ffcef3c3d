package dev.redlock.core;

/**
 * Lets the tests of other packages (the fault scenarios) wait until a {@link Redlock}'s
 * connections opened in advance are all open: see
 * {@link TestSupport#awaitWarmPools(Redlock)}.
 */
public final class WarmPools {

	private WarmPools() {
	}

	/**
	 * Waits until every node's pool holds the connections it opens in advance.
	 * @param redlock the instance
	 */
	public static void await(Redlock redlock) {
		TestSupport.awaitWarmPools(redlock);
	}

}
