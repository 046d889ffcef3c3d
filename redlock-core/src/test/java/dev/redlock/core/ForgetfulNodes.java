package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The steps the forgetful-node scenarios share: A, the first holder, reaches nodes 3 and
 * 4 through proxies, which are cut when A acquires, so that A's lock is on nodes 0, 1 and
 * 2 only (a bare quorum of 5) and its {@code SET} never reaches the two others; then one
 * of A's nodes forgets the lock, and B, which reaches every node, would have a quorum of
 * its own while A's lease is valid.
 */
final class ForgetfulNodes implements AutoCloseable {

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
		this.cut.forEach(LatencyProxy::close);
		LockRequest request = LockRequest.of(resource, this.holder.settings().defaultTtl());
		Lease first = this.holder.acquire(fenced ? request.fenced() : request, Duration.ofSeconds(5));
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
