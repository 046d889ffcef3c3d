package dev.redlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A node that may have forgotten a lock it granted never votes until that lock has
 * expired: here after a failover behind the node's address, and after a loss of data
 * without restart ({@code FLUSHALL}). Each scenario is the one Redlock exists for: A's
 * lock is on a bare quorum (two nodes were frozen when A took it and missed the
 * {@code SET}), then one of A's nodes forgets it; B, with the two others, would have a
 * quorum of its own while A's lease is valid. The clock step is in
 * {@link ClockStepTests}.
 */
@WithRedisNodes(count = 6)
class ForgetfulNodeTests {

	private static final Duration QUARANTINE = Duration.ofSeconds(3);

	private static final RedlockSettings SETTINGS = TestSupport.withQuarantine(QUARANTINE);

	private static final String RESOURCE = "forgetful";

	@Test
	void aFlushedNodeIsQuarantinedAndGivesNoSecondHolder(RedisNodes nodes) {
		try (ForgetfulNodes scenario = new ForgetfulNodes(nodes, firstFive(nodes), SETTINGS);
				Redlock warm = redlock(firstFive(nodes))) {
			ForgetfulNodes.awaitCounting(scenario.holder(), warm);
			Lease first = scenario.acquiredOnNodes012(RESOURCE);
			nodes.node(2).command("FLUSHALL");

			int attempts = ForgetfulNodes.refusedWhileValid(first, warm, RESOURCE, Duration.ofMillis(500));
			try (Redlock fresh = redlock(firstFive(nodes))) {
				attempts += ForgetfulNodes.refusedWhileValid(first, fresh, RESOURCE, Duration.ofMillis(500));
				assertThat(fresh.checkNodes().get(2).quarantineReason()).isEqualTo(QuarantineReason.DATA_LOSS);
			}
			assertThat(attempts).isPositive();
			assertThat(warm.checkNodes().get(2).quarantineReason()).isEqualTo(QuarantineReason.DATA_LOSS);
			first.release();
		}
	}

	@Test
	void aReplicaPromotedBehindTheNodesAddressIsQuarantinedAndGivesNoSecondHolder(RedisNodes nodes) {
		RedisNode master = nodes.node(0);
		RedisNode replica = nodes.node(5);
		try (LatencyProxy address = LatencyProxy.to(master, Duration.ZERO);
				LatencyProxy replication = LatencyProxy.to(master, Duration.ZERO)) {
			replica.command("REPLICAOF", replication.host(), String.valueOf(replication.port()));
			TestSupport.awaitTrue("the replica is in sync", Duration.ofSeconds(10),
					() -> replica.command("INFO", "replication").contains("master_link_status:up"));
			List<String> uris = new ArrayList<>(firstFive(nodes));
			uris.set(0, address.uri());
			try (ForgetfulNodes scenario = new ForgetfulNodes(nodes, uris, SETTINGS)) {
				ForgetfulNodes.awaitCounting(scenario.holder());
				// the replica misses A's SET: its link to the master is down (replication
				// is asynchronous: a replica may lag by any amount)
				replication.close();
				TestSupport.awaitTrue("the replica lost its master", Duration.ofSeconds(10),
						() -> replica.command("INFO", "replication").contains("master_link_status:down"));
				Lease first = scenario.acquiredOnNodes012(RESOURCE);
				master.kill();
				replica.command("REPLICAOF", "NO", "ONE");
				address.retarget(replica);
				assertThat(replica.command("GET", TestSupport.PREFIX + RESOURCE)).as("the promoted replica lacks it")
					.isNull();

				// a client that never saw the old master: only the promotion tells
				try (Redlock fresh = redlock(uris)) {
					int attempts = ForgetfulNodes.refusedWhileValid(first, fresh, RESOURCE, Duration.ofSeconds(1));
					assertThat(attempts).isPositive();
					assertThat(fresh.checkNodes().get(0).quarantineReason()).isEqualTo(QuarantineReason.FAILOVER);
				}
				first.release();
			}
		}
		finally {
			// a promoted replica keeps a second replication id until it restarts
			replica.restart();
		}
	}

	private static List<String> firstFive(RedisNodes nodes) {
		return nodes.uris().subList(0, 5);
	}

	private static Redlock redlock(List<String> uris) {
		return Redlock.builder().nodes(uris).settings(SETTINGS).build();
	}

}
