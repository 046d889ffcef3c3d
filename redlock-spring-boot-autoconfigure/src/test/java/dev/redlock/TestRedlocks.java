package dev.redlock;

import java.time.Duration;

import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockSettings;
import dev.redlock.test.RedisNodes;

/**
 * {@code Redlock} instances built by the tests themselves, beside or instead of the
 * application's: another application instance, or a client of a component under test.
 */
public final class TestRedlocks {

	/**
	 * The defaults with the restart quarantine off: the kit's nodes were started moments
	 * ago (a short uptime), and hold nobody's locks. The node timeout is 1 s instead of
	 * 100 ms: a single attempt, an extension or a release must hear from a quorum within
	 * it, and on a loaded machine a healthy node can be descheduled for longer than 100
	 * ms. Tests about timeouts set their own.
	 */
	public static final RedlockSettings SETTINGS = RedlockSettings.defaults()
		.withRestartQuarantine(Duration.ZERO)
		.withNodeTimeout(Duration.ofSeconds(1));

	private TestRedlocks() {
	}

	/**
	 * A Redlock on the nodes with {@link #SETTINGS}.
	 * @param nodes the nodes
	 * @return a new instance; close it when done
	 */
	public static Redlock on(RedisNodes nodes) {
		return on(nodes, SETTINGS);
	}

	/**
	 * A Redlock on the nodes with the given settings.
	 * @param nodes the nodes
	 * @param settings the settings
	 * @return a new instance; close it when done
	 */
	public static Redlock on(RedisNodes nodes, RedlockSettings settings) {
		return Redlock.builder().nodes(nodes.uris()).settings(settings).build();
	}

}
