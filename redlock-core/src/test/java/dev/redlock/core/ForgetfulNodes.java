package dev.redlock.core;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import dev.redlock.core.internal.NodeGroup;
import dev.redlock.core.internal.protocol.KeyLayout;
import dev.redlock.core.internal.quarantine.NodeMarker;
import dev.redlock.core.internal.quarantine.NodeQuarantine;
import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The steps the forgetful-node scenarios share: A, the first holder, reaches nodes 3 and
 * 4 through proxies, which are cut when A acquires, so that A's lock is on nodes 0, 1 and
 * 2 only (a bare quorum of 5) and its {@code SET} never reaches the two others; then one
 * of A's nodes forgets the lock, and B, which reaches every node, would have a quorum of
 * its own while A's lease is valid.
 */
final class ForgetfulNodes implements AutoCloseable {

	/** What {@link #trustedCounter} says of a node whose counters are not trusted. */
	static final long UNTRUSTED = -1;

	private final RedisNodes nodes;

	private final List<LatencyProxy> cut = new ArrayList<>();

	private final Redlock holder;

	/**
	 * Builds A.
	 * @param uris the five nodes as B reaches them
	 */
	ForgetfulNodes(RedisNodes nodes, List<String> uris, RedlockSettings settings) {
		this.nodes = nodes;
		List<String> holderUris = new ArrayList<>(uris);
		for (int i = 3; i <= 4; i++) {
			LatencyProxy proxy = LatencyProxy.to(nodes.node(i), Duration.ZERO);
			this.cut.add(proxy);
			holderUris.set(i, proxy.uri());
		}
		this.holder = Redlock.builder().nodes(holderUris).settings(settings).build();
	}

	/** A. */
	Redlock holder() {
		return this.holder;
	}

	/** A acquires once it is cut off from nodes 3 and 4: its lock is on 0, 1 and 2. */
	Lease acquiredOnNodes012(String resource) {
		return acquiredOnNodes012(resource, false);
	}

	/**
	 * A acquires, fenced or not, once it is cut off from nodes 3 and 4: its lock is on 0,
	 * 1 and 2.
	 */
	Lease acquiredOnNodes012(String resource, boolean fenced) {
		return acquiredOnNodes012(resource, fenced, Duration.ofSeconds(5));
	}

	/**
	 * A acquires, waiting at most the given time, once it is cut off from nodes 3 and 4.
	 * @throws LockNotAcquiredException if A does not count nodes 0, 1 and 2
	 */
	Lease acquiredOnNodes012(String resource, boolean fenced, Duration wait) {
		this.cut.forEach(LatencyProxy::close);
		LockRequest request = LockRequest.of(resource, this.holder.settings().defaultTtl());
		Lease first = this.holder.acquire(fenced ? request.fenced() : request, wait);
		for (int i = 3; i <= 4; i++) {
			assertThat(this.nodes.node(i).command("GET", TestSupport.PREFIX + resource))
				.as("A's SET never reached node %d", i)
				.isNull();
		}
		return first;
	}

	@Override
	public void close() {
		this.holder.close();
		this.cut.forEach(LatencyProxy::close);
	}

	/**
	 * The node's fencing counter for the resource, 0 if it has none, when its marker says
	 * its counters are trusted; {@link #UNTRUSTED} while they are pending or it has no
	 * marker.
	 */
	static long trustedCounter(RedisNode node, String resource) {
		return trustedCounter(node, resource, KeyLayout.PLAIN, NodeMarker.KEY);
	}

	/**
	 * A node's count for a resource when the node's counters are trusted, with the keys
	 * laid out as given and the node's marker under the given key; else
	 * {@link #UNTRUSTED}.
	 */
	static long trustedCounter(RedisNode node, String resource, KeyLayout keys, String markerKey) {
		String marker = node.command("GET", markerKey);
		NodeMarker parsed = (marker != null) ? NodeMarker.parse(marker.getBytes(StandardCharsets.UTF_8)) : null;
		if (parsed == null || !parsed.countersOk()) {
			return UNTRUSTED;
		}
		String counterKey = keys
			.counterKey(keys.storedKey((TestSupport.PREFIX + resource).getBytes(StandardCharsets.UTF_8)))
			.toString();
		String counter = node.command("GET", counterKey);
		return (counter != null) ? Long.parseLong(counter.split(" ")[0]) : 0;
	}

	/**
	 * Waits until every client counts every node: fresh or flushed nodes are in
	 * quarantine at first.
	 */
	static void awaitCounting(Redlock... clients) {
		for (Redlock client : clients) {
			Duration quarantine = client.settings().restartQuarantine();
			TestSupport.awaitTrue("every node counts", quarantine.multipliedBy(2).plusSeconds(10),
					() -> client.checkNodes().stream().allMatch(NodeStatus::counts));
		}
	}

	/**
	 * Waits until every node has been up for longer than the given time: a client whose
	 * quarantine is shorter (by a second, since uptime is counted a second short) counts
	 * each node from the moment it meets it, with no restart to wait out.
	 */
	static void awaitNodesUpFor(RedisNodes nodes, Duration time) {
		TestSupport.awaitTrue("every node up for longer than " + time, time.plusSeconds(10), () -> {
			for (RedisNode node : nodes.nodes()) {
				String info = String.valueOf(node.command("INFO", "server"));
				int at = info.indexOf("uptime_in_seconds:") + "uptime_in_seconds:".length();
				if (Long.parseLong(info.substring(at).split("\\r?\\n")[0].trim()) <= time.toSeconds()) {
					return false;
				}
			}
			return true;
		});
	}

	/**
	 * Waits until a client is warm: it has read every node's marker (its greeting or its
	 * probe did), so that it remembers each marker's epoch and generation.
	 */
	static void awaitWarm(Redlock client) {
		NodeGroup group = client.internals().group();
		TestSupport.awaitTrue("the client has read every node's marker",
				client.settings().restartQuarantine().plusSeconds(10), () -> {
					for (int i = 0; i < client.nodeAddresses().size(); i++) {
						if (group.quarantine(i).markers().memory().generation() == null) {
							return false;
						}
					}
					return true;
				});
	}

	/**
	 * Waits until a client has probed every node since now: what the probe finds (a
	 * reload, an eviction, a policy that evicts) is then known to it.
	 */
	static void awaitProbed(Redlock client, int node) {
		NodeQuarantine quarantine = client.internals().group().quarantine(node);
		TestSupport.awaitTrue("the client's probe has seen node " + node + " forget",
				client.settings().restartQuarantine().plusSeconds(10), () -> !quarantine.counts());
	}

	/**
	 * Checks that the fault did what the scenario needs: A's key is gone from the node,
	 * or expires there before A's lease ends.
	 */
	static void assertGoneBeforeLeaseEnds(RedisNode node, Lease first, String resource) {
		long remaining = first.remainingValidity().toMillis();
		long keyLeft = Long.parseLong(String.valueOf(node.command("PTTL", TestSupport.PREFIX + resource)));
		assertThat(keyLeft).as("ms A's key has left on %s (-2: gone), with %d ms of A's lease left", node, remaining)
			.isLessThan(remaining);
	}

	/**
	 * A, which needs nodes 0, 1 and 2, is refused within the given wait, and its refused
	 * attempt leaves no key on any node.
	 */
	void assertHolderRefused(String resource, Duration wait) {
		assertThatThrownBy(() -> acquiredOnNodes012(resource, false, wait))
			.isInstanceOf(LockNotAcquiredException.class);
		TestSupport.awaitTrue("A's refused attempt left no key", Duration.ofSeconds(5),
				() -> TestSupport.nodesWithKey(this.nodes, TestSupport.PREFIX + resource) == 0);
	}

	/**
	 * A client that meets the nodes only now (opened here, closed after) tries for a
	 * while: it must get no lock while A's lease is valid, and must have tried.
	 */
	static void assertNewClientRefusedWhileValid(Lease first, RedisNodes nodes, RedlockSettings settings,
			String resource, Duration trying) {
		try (Redlock brandNew = TestSupport.redlock(nodes, settings)) {
			assertThat(refusedWhileValid(first, brandNew, resource, trying)).isPositive();
		}
	}

	/**
	 * B tries for a while (or until A's lease ends): it must get no lock while A's lease
	 * is valid.
	 * @return how many attempts B made while A's lease was valid
	 */
	static int refusedWhileValid(Lease first, Redlock b, String resource, Duration trying) {
		long end = System.nanoTime() + trying.toNanos();
		int attempts = 0;
		while (first.isValid() && System.nanoTime() - end < 0) {
			Optional<Lease> second = b.tryAcquire(resource, b.settings().defaultTtl());
			boolean firstStillValid = first.isValid();
			second.ifPresent(Lease::release);
			assertThat(second.isPresent() && firstStillValid).as("a second holder while the first is valid").isFalse();
			attempts += firstStillValid ? 1 : 0;
		}
		return attempts;
	}

}
