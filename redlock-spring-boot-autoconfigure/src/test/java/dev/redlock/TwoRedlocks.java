package dev.redlock;

import dev.redlock.core.Redlock;
import dev.redlock.test.RedisNodes;

/**
 * Two {@code Redlock} instances on the same nodes with {@link TestRedlocks#SETTINGS},
 * standing for two application instances.
 *
 * @param here the instance of the component under test
 * @param elsewhere another application instance
 */
public record TwoRedlocks(Redlock here, Redlock elsewhere) implements AutoCloseable {

	/**
	 * Two new instances on the nodes.
	 * @param nodes the nodes
	 * @return the instances; close them when done
	 */
	public static TwoRedlocks on(RedisNodes nodes) {
		return new TwoRedlocks(TestRedlocks.on(nodes), TestRedlocks.on(nodes));
	}

	/**
	 * Closes both instances.
	 */
	@Override
	public void close() {
		try {
			this.here.close();
		}
		finally {
			this.elsewhere.close();
		}
	}

}
