package dev.redlock.test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Tracks every node the kit started so that a JVM shutdown hook can stop the ones nobody
 * closed.
 */
final class Cleanup {

	private static final Set<ManagedNode> LIVE = ConcurrentHashMap.newKeySet();

	private static boolean hookInstalled;

	private Cleanup() {
	}

	static void track(ManagedNode node) {
		installHook();
		LIVE.add(node);
	}

	static void untrack(ManagedNode node) {
		LIVE.remove(node);
	}

	private static synchronized void installHook() {
		if (hookInstalled) {
			return;
		}
		Thread hook = new Thread(Cleanup::stopAll, "redlock-test-redis-cleanup");
		Runtime.getRuntime().addShutdownHook(hook);
		hookInstalled = true;
	}

	/** Stops every node still alive; runs in the shutdown hook. */
	static void stopAll() {
		List<ManagedNode> nodes = new ArrayList<>(LIVE);
		for (ManagedNode node : nodes) {
			try {
				node.stop();
			}
			catch (Throwable ignored) {
				// best effort: never let one node keep the others alive
			}
		}
	}

}
