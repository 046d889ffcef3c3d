package dev.redlock.core;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import dev.redlock.core.RedlockListener.AcquireEvent;
import dev.redlock.core.RedlockListener.LeaseLostEvent;
import dev.redlock.core.internal.protocol.LockScripts;
import dev.redlock.core.internal.quarantine.NodeMarker;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;

/**
 * Helpers shared by the tests that run against real nodes.
 */
final class TestSupport {

	static final String PREFIX = "redlock:";

	/**
	 * The defaults with the restart quarantine off: the kit's nodes were started moments
	 * ago (a short uptime), and hold nobody's locks. {@code RestartQuarantineTests} tests
	 * the quarantine. The node timeout is 1 s instead of 100 ms: on a machine whose every
	 * core is busy, a healthy node's reply can wait a few hundred milliseconds for a CPU,
	 * and a test that makes one attempt, one extension or one release must not fail for
	 * it. Tests that measure the node timeout set a shorter one of their own. The
	 * transport is the default, or the one {@link #TRANSPORT_PROPERTY} names.
	 */
	static final RedlockSettings SETTINGS = RedlockSettings.defaults()
		.toBuilder()
		.restartQuarantine(Duration.ZERO)
		.nodeTimeout(Duration.ofSeconds(1))
		.transport(transportUnderTest())
		.build();

	/**
	 * The test settings with the restart quarantine on for the given time, which is also
	 * the default TTL (the longest a TTL may be): for the tests of forgetful nodes.
	 */
	static RedlockSettings withQuarantine(Duration quarantine) {
		return SETTINGS.toBuilder().restartQuarantine(quarantine).defaultTtl(quarantine).build();
	}

	/**
	 * The system property that runs the suite on another transport:
	 * {@code -Dredlock.test.transport=shared} sends even a lone round over the shared
	 * connections, which most tests, each with one thread, would otherwise never use.
	 */
	static final String TRANSPORT_PROPERTY = "redlock.test.transport";

	private TestSupport() {
	}

	private static RedlockSettings.Transport transportUnderTest() {
		String name = System.getProperty(TRANSPORT_PROPERTY, "");
		return name.isBlank() ? RedlockSettings.defaults().transport()
				: RedlockSettings.Transport.valueOf(name.trim().toUpperCase(Locale.ROOT));
	}

	static Redlock redlock(RedisNodes nodes, RedlockSettings settings) {
		return Redlock.builder().nodes(nodes.uris()).settings(settings).build();
	}

	static Redlock redlock(RedisNodes nodes, RedlockSettings settings, RedlockListener listener) {
		return Redlock.builder().nodes(nodes.uris()).settings(settings).listener(listener).build();
	}

	static Redlock redlock(RedisNodes nodes, RedlockSettings settings, LongSupplier ticker) {
		return Redlock.builder().nodes(nodes.uris()).settings(settings).ticker(ticker).build();
	}

	/** A listener that hears of finished acquisitions only. */
	static RedlockListener onAcquireFinished(Consumer<AcquireEvent> action) {
		return new RedlockListener() {
			@Override
			public void acquireFinished(AcquireEvent event) {
				action.accept(event);
			}
		};
	}

	/** A listener that hears of lost leases only. */
	static RedlockListener onLeaseLost(Consumer<LeaseLostEvent> action) {
		return new RedlockListener() {
			@Override
			public void leaseLost(LeaseLostEvent event) {
				action.accept(event);
			}
		};
	}

	/** The ACL user the credential tests create on the nodes. */
	static final String ACL_USER = "locker";

	/**
	 * Creates the ACL user {@value #ACL_USER} on every node.
	 * @param rules ACL rules after the password, e.g. {@code "~*", "+@all"}
	 */
	static void createAclUser(RedisNodes nodes, String password, String... rules) {
		String[] command = new String[5 + rules.length];
		command[0] = "ACL";
		command[1] = "SETUSER";
		command[2] = ACL_USER;
		command[3] = "on";
		command[4] = ">" + password;
		System.arraycopy(rules, 0, command, 5, rules.length);
		for (int i = 0; i < nodes.size(); i++) {
			nodes.node(i).command(command);
		}
	}

	/**
	 * A {@code Redlock} over the nodes that logs in as the given user.
	 * @param userInfo {@code user:password}
	 */
	static Redlock loggingInAs(RedisNodes nodes, String userInfo, RedlockSettings settings) {
		List<String> uris = nodes.nodes()
			.stream()
			.map((node) -> "redis://" + userInfo + "@" + node.host() + ":" + node.port())
			.toList();
		return Redlock.builder().nodes(uris).settings(settings).build();
	}

	/**
	 * Waits until every node counts the expected subscribers to the release channel of a
	 * resource's lock.
	 */
	static void awaitSubscribed(RedisNodes nodes, String resource, int subscribers) {
		String channel = LockScripts.RELEASED_CHANNEL_PREFIX + PREFIX + resource;
		awaitTrue(subscribers + " subscriber(s) to " + channel, Duration.ofSeconds(5), () -> nodes.nodes()
			.stream()
			.allMatch(
					(node) -> String.valueOf(node.command("PUBSUB", "NUMSUB", channel)).endsWith("\n" + subscribers)));
	}

	/** Drops the ACL user {@value #ACL_USER} from every node. */
	static void dropAclUser(RedisNodes nodes) {
		for (int i = 0; i < nodes.size(); i++) {
			nodes.node(i).command("ACL", "DELUSER", ACL_USER);
		}
	}

	/**
	 * The running, unpaused nodes on which the key exists now; {@code EXISTS} also
	 * expires a key whose TTL is over, where {@code DBSIZE} counts it until the node's
	 * active expiry finds it.
	 */
	static long nodesWithKey(RedisNodes nodes, String key) {
		long holding = 0;
		for (int i = 0; i < nodes.size(); i++) {
			RedisNode node = nodes.node(i);
			if (node.isRunning() && !node.isPaused() && "1".equals(node.command("EXISTS", key))) {
				holding++;
			}
		}
		return holding;
	}

	/**
	 * Keys left on every node, summed; a node's marker (written when the quarantine is
	 * on) is not one of ours to leave.
	 */
	static long keysOnNodes(RedisNodes nodes) {
		long total = 0;
		for (int i = 0; i < nodes.size(); i++) {
			if (nodes.node(i).isRunning() && !nodes.node(i).isPaused()) {
				total += keysOn(nodes.node(i));
			}
		}
		return total;
	}

	/**
	 * The keys on each node (running and not paused; -1 for the others), markers left
	 * out.
	 */
	static List<Long> keysByNode(RedisNodes nodes) {
		List<Long> keys = new ArrayList<>();
		for (int i = 0; i < nodes.size(); i++) {
			RedisNode node = nodes.node(i);
			keys.add((node.isRunning() && !node.isPaused()) ? keysOn(node) : -1L);
		}
		return keys;
	}

	/**
	 * Keys on one node, its marker left out; read in one command, since a client's probe
	 * may write the marker at any moment (a {@code DBSIZE} and an {@code EXISTS} could
	 * see it once and not the other time).
	 */
	static long keysOn(RedisNode node) {
		String keys = node.command("KEYS", "*");
		if (keys == null || keys.isEmpty()) {
			return 0;
		}
		return Arrays.stream(keys.split("\n")).filter((key) -> !isMarker(key)).count();
	}

	/**
	 * Whether a key is a node's marker: {@code {fence}}, or on a node of a voter of
	 * several, a key of its own slots ({@code {m<i>}:marker}).
	 */
	static boolean isMarker(String key) {
		return key.equals(NodeMarker.KEY) || key.matches("\\{m\\d+\\}:marker");
	}

	/**
	 * Waits until no key is left on any node: a release returns once a quorum has deleted
	 * its key, and the other nodes delete it a moment later, off the caller's thread.
	 */
	static void awaitNoKeys(RedisNodes nodes) {
		awaitTrue("no key is left on any node", Duration.ofSeconds(5), () -> keysOnNodes(nodes) == 0,
				() -> keysLeft(nodes));
	}

	/** The keys left on each running, unpaused node, with their TTLs, a few per node. */
	static String keysLeft(RedisNodes nodes) {
		StringBuilder left = new StringBuilder("left:");
		for (int i = 0; i < nodes.size(); i++) {
			RedisNode node = nodes.node(i);
			if (node.isRunning() && !node.isPaused()) {
				String[] keys = String.valueOf(node.command("KEYS", "*")).split("\n");
				left.append(" node ").append(i).append(" [");
				for (int k = 0; k < Math.min(keys.length, 5); k++) {
					if (!keys[k].isEmpty() && !isMarker(keys[k])) {
						left.append(keys[k]).append(" (ttl ").append(node.command("PTTL", keys[k])).append(" ms) ");
					}
				}
				left.append("]");
			}
		}
		return left.toString();
	}

	/**
	 * Waits until every node's pool holds the connections it opens in advance
	 * ({@link RedlockSettings#poolMinIdle()}), so that nothing is being opened behind a
	 * test that counts connections.
	 */
	static void awaitWarmPools(Redlock redlock) {
		RedlockSettings settings = redlock.settings();
		int warm = Math.min(settings.poolMinIdle(), settings.poolMaxIdle());
		int nodes = redlock.nodeAddresses().size();
		awaitTrue("every node's pool holds its " + warm + " warm connections", Duration.ofSeconds(10), () -> {
			for (int i = 0; i < nodes; i++) {
				if (redlock.internals().idleConnections(i) < warm) {
					return false;
				}
			}
			return true;
		});
	}

	/** Polls until the condition holds, failing after the deadline. */
	static void awaitTrue(String what, Duration timeout, BooleanSupplier condition) {
		awaitTrue(what, timeout, condition, () -> "");
	}

	/**
	 * Polls until the condition holds, failing after the deadline with what {@code state}
	 * says then, so that a timeout tells which part of the condition did not hold.
	 */
	static void awaitTrue(String what, Duration timeout, BooleanSupplier condition, Supplier<String> state) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() - deadline > 0) {
				String now = state.get();
				throw new AssertionError(
						"Timed out after " + timeout + " waiting until " + what + (now.isEmpty() ? "" : "; " + now));
			}
			LockSupport.parkNanos(1_000_000);
		}
	}

	/**
	 * Returns a loopback port nothing listens on: one the system just gave out and that
	 * was closed again, so a connection to it is refused.
	 */
	static int closedPort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Pauses the caller for the whole duration: {@code parkNanos} alone may return at
	 * once (a permit left by an earlier unpark of this thread) or early.
	 */
	static void pauseFor(Duration pause) {
		long end = System.nanoTime() + pause.toNanos();
		for (long left = pause.toNanos(); left > 0; left = end - System.nanoTime()) {
			LockSupport.parkNanos(left);
		}
	}

	/**
	 * A ticker that stands still until the test moves it on or lets it run: time passes
	 * for a {@code Redlock} built with it only when the test says so, however long the
	 * machine keeps the test from running.
	 */
	static final class ManualTicker implements LongSupplier {

		private final AtomicLong stoppedAt = new AtomicLong(System.nanoTime());

		/** Added to {@link System#nanoTime()} once running. */
		private volatile long offset;

		private volatile boolean running;

		@Override
		public long getAsLong() {
			return this.running ? System.nanoTime() + this.offset : this.stoppedAt.get();
		}

		/** Moves the ticker on while it stands still. */
		void advance(Duration duration) {
			if (this.running) {
				throw new IllegalStateException("the ticker runs");
			}
			this.stoppedAt.addAndGet(duration.toNanos());
		}

		/**
		 * Lets the ticker run with {@link System#nanoTime()} from its reading now,
		 * without a jump.
		 */
		void run() {
			this.offset = this.stoppedAt.get() - System.nanoTime();
			this.running = true;
		}

	}

	/** A ticker that returns the given readings in order, then repeats the last one. */
	static final class ScriptedTicker implements LongSupplier {

		private final long[] readings;

		private final AtomicInteger next = new AtomicInteger();

		ScriptedTicker(Duration... readings) {
			this.readings = new long[readings.length];
			for (int i = 0; i < readings.length; i++) {
				this.readings[i] = readings[i].toNanos();
			}
		}

		@Override
		public long getAsLong() {
			int index = Math.min(this.next.getAndIncrement(), this.readings.length - 1);
			return this.readings[index];
		}

	}

}
