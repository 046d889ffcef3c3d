package dev.redlock.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;

import dev.redlock.core.internal.NodeGroup;
import dev.redlock.core.internal.round.Fanout;
import dev.redlock.core.internal.round.NodeReply;
import dev.redlock.core.internal.round.NotReplicatedException;
import dev.redlock.core.internal.round.RoundCommand;
import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.SentinelManagedMaster;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A Sentinel voter that waits for its replica ({@code ?waitReplicas=1}: a write there
 * counts once the replica acknowledged it), beside two standalone masters X and Y. What
 * counted there is on the replica before the caller has it, so a promotion of that
 * replica loses no lock and costs the voter no quarantine; a write the replica did not
 * acknowledge counts for nothing. The same failover without waiting is in
 * {@link SentinelVoterTests}: there the promoted replica counts for no quorum until the
 * quarantine has passed.
 */
@WithRedisNodes(count = 2)
class ReplicatedSentinelVoterTests {

	/**
	 * Also A's TTL: long enough for the failover and B's attempts on a loaded machine
	 * (the longest TTL a lock may have with the quarantine on).
	 */
	private static final Duration QUARANTINE = Duration.ofSeconds(20);

	private static final String RESOURCE = "replicated-sentinel-voter";

	private static final String KEY = TestSupport.PREFIX + RESOURCE;

	@Test
	void aFailoverKeepsTheLocksTheReplicaAcknowledgedAndCostsTheVoterNoQuarantine(RedisNodes nodes) {
		RedisNode x = nodes.node(0);
		RedisNode y = nodes.node(1);
		try (SentinelManagedMaster voter = SentinelManagedMaster.start("orders", 1, 3);
				LatencyProxy yForA = LatencyProxy.to(y, Duration.ZERO);
				Redlock a = redlock(TestSupport.withQuarantine(QUARANTINE), waiting(voter), x.uri(), yForA.uri());
				Redlock b = redlock(TestSupport.withQuarantine(QUARANTINE), waiting(voter), x.uri(), y.uri())) {
			RedisNode replica = voter.dataNodes().get(1);
			ForgetfulNodes.awaitCounting(a, b);
			assertThat(b.checkNodes().get(0).node()).endsWith("?waitReplicas=1#orders");
			// a client meeting the replica only once promoted counts it by its uptime
			TestSupport.awaitTrue("the replica up for longer than the quarantine", Duration.ofSeconds(30),
					() -> uptimeSeconds(replica) > QUARANTINE.toSeconds() + 1);

			// A is cut off from Y: its lock is on the voter and X only, and the voter
			// counted it once the replica had it
			yForA.close();
			Lease first = a.acquire(RESOURCE, QUARANTINE, Duration.ofSeconds(5));
			assertThat(replica.command("GET", KEY)).as("A's grant, on the replica before it counted")
				.isNotNull()
				.isEqualTo(voter.master().command("GET", KEY));

			String aValue = replica.command("GET", KEY);
			RedisNode promoted = voter.failover();
			assertThat(promoted.port()).isEqualTo(replica.port());
			assertThat(promoted.command("GET", KEY)).as("A's lock, kept by the promoted master").isEqualTo(aValue);
			TestSupport.awaitTrue("B follows the failover", Duration.ofSeconds(10),
					() -> ("127.0.0.1:" + promoted.port()).equals(b.checkNodes().get(0).master()));
			NodeStatus followed = b.checkNodes().get(0);
			assertThat(followed.counts()).as("the promoted replica counts at once: %s", followed).isTrue();
			assertThat(followed.quarantineRemaining()).isZero();

			// it counts, and it holds A's lock: no second holder, for B nor for a client
			// that meets the new master only now
			int attempts = ForgetfulNodes.refusedWhileValid(first, b, RESOURCE, Duration.ofSeconds(1));
			try (Redlock brandNew = redlock(TestSupport.withQuarantine(QUARANTINE), waiting(voter), x.uri(), y.uri())) {
				assertThat(brandNew.checkNodes().get(0).counts()).as("the promotion is in the marker").isTrue();
				attempts += ForgetfulNodes.refusedWhileValid(first, brandNew, RESOURCE, Duration.ofSeconds(1));
			}
			assertThat(attempts).isPositive();
			first.release();
			assertThat(promoted.command("GET", KEY)).as("released on the new master").isNull();

			// with Y down, the promoted master and X make a quorum once the new master
			// has a replica to acknowledge its writes: the former master, made one by the
			// sentinels. Its first acknowledgements after the resync may come later than
			// the clock tolerance allows a grant (the node's clock is read with it), so B
			// may try more than once
			voter.awaitOnlyMaster(promoted);
			TestSupport.awaitTrue("the former master replicates the new one", Duration.ofSeconds(30),
					() -> promoted.command("INFO", "replication").contains("connected_slaves:1")
							&& promoted.command("INFO", "replication").contains("state=online"));
			y.kill();
			try (Lease again = b.acquire(RESOURCE, Duration.ofSeconds(5), Duration.ofSeconds(5))) {
				assertThat(promoted.command("GET", KEY)).as("on the promoted master").isNotNull();
				assertThat(x.command("GET", KEY)).as("on X").isNotNull();
			}
		}
		finally {
			y.restart();
		}
	}

	@Test
	void aGrantItsReplicaAcknowledgesLaterThanTheClockToleranceCountsAtOnce(RedisNodes nodes) {
		RedisNode x = nodes.node(0);
		RedisNode y = nodes.node(1);
		// long enough a node timeout that WAIT (half of it) outlasts the replica's pause
		RedlockSettings settings = TestSupport.withQuarantine(QUARANTINE)
			.toBuilder()
			.nodeTimeout(Duration.ofSeconds(4))
			.build();
		long pauseMillis = 3 * settings.clockTolerance().toMillis();
		try (SentinelManagedMaster voter = SentinelManagedMaster.start("ledger", 1, 1);
				Redlock redlock = redlock(settings, waiting(voter), x.uri(), y.uri())) {
			RedisNode master = voter.master();
			RedisNode replica = voter.dataNodes().get(1);
			ForgetfulNodes.awaitCounting(redlock);
			// the quorum needs the voter, whose clock is read with its grant
			y.kill();
			replica.pause();
			// the fault: the replica is resumed, and acknowledges, that much after the
			// grant
			CompletableFuture<Void> resumed = CompletableFuture
				.runAsync(() -> TestSupport.awaitTrue("the grant on the master", Duration.ofSeconds(10),
						() -> master.command("GET", KEY) != null))
				.thenRunAsync(replica::resume, CompletableFuture.delayedExecutor(pauseMillis, TimeUnit.MILLISECONDS))
				.whenComplete((done, failure) -> {
					if (failure != null) {
						replica.resume();
					}
				});
			long start = System.nanoTime();
			try (Lease lease = redlock.acquire(RESOURCE, Duration.ofSeconds(20), Duration.ZERO)) {
				long tookMillis = Duration.ofNanos(System.nanoTime() - start).toMillis();
				resumed.join();
				assertThat(tookMillis).as("the round waited for the replica").isGreaterThanOrEqualTo(pauseMillis);
				assertThat(replica.command("GET", KEY)).as("on the replica").isEqualTo(master.command("GET", KEY));
				assertThat(x.command("GET", KEY)).as("on X").isEqualTo(master.command("GET", KEY));
			}
			finally {
				resumed.join();
			}
		}
		finally {
			y.restart();
		}
	}

	@Test
	void aGrantOrAnExtensionTheReplicaDidNotAcknowledgeCountsForNothing(RedisNodes nodes) {
		RedisNode x = nodes.node(0);
		RedisNode y = nodes.node(1);
		try (SentinelManagedMaster voter = SentinelManagedMaster.start("ledger", 1, 1);
				Redlock redlock = redlock(TestSupport.SETTINGS, waiting(voter), x.uri(), y.uri())) {
			RedisNode master = voter.master();
			RedisNode replica = voter.dataNodes().get(1);
			Lease held = redlock.acquire(RESOURCE, Duration.ofSeconds(20), Duration.ofSeconds(5));
			// X and Y may have settled it before the voter answered: its replica gets it
			// soon all the same
			TestSupport.awaitTrue("the lock replicated", Duration.ofSeconds(5),
					() -> replica.command("GET", KEY) != null);

			// the replica loses its master, which refuses it a resync from now
			master.command("ACL", "SETUSER", "default", "-psync", "-sync");
			master.command("CLIENT", "KILL", "TYPE", "replica");
			TestSupport.awaitTrue("the replica lost its master", Duration.ofSeconds(10),
					() -> replica.command("INFO", "replication").contains("master_link_status:down"));
			// a batch (renewals due together): every call in it counts for nothing there
			NodeGroup group = redlock.internals().group();
			Fanout fanout = new Fanout(group.pools(), Duration.ofSeconds(1).toNanos());
			RoundCommand batch = RoundCommand.batch(List.of(new CommandArguments(Command.SET).add("batch-a").add(1),
					new CommandArguments(Command.SET).add("batch-b").add(1)));
			NodeReply[] replies = fanout.execute(group.replicaWaits().counted(batch, fanout), null, null);
			assertThat((List<?>) replies[0].value()).hasSize(2)
				.allSatisfy((reply) -> assertThat(reply).isInstanceOf(NotReplicatedException.class));
			assertThat((List<?>) replies[1].value()).as("X waits for nothing")
				.hasSize(2)
				.noneMatch(Exception.class::isInstance);
			y.kill();

			// the extension ran on the master but counts on X alone
			assertThat(held.extend(Duration.ofSeconds(20))).as("extended on a quorum").isFalse();
			held.release();
			assertThatExceptionOfType(LockNotAcquiredException.class)
				.isThrownBy(() -> redlock.acquire("unreplicated", Duration.ofSeconds(20), Duration.ZERO))
				.satisfies((ex) -> assertThat(ex.getMessage()).contains("not replicated: 0 of the 1 replicas"));
			// the grant that did not count is taken back from the master
			TestSupport.awaitTrue("the unreplicated grant removed", Duration.ofSeconds(10),
					() -> master.command("GET", TestSupport.PREFIX + "unreplicated") == null);
		}
		finally {
			y.restart();
		}
	}

	private static long uptimeSeconds(RedisNode node) {
		for (String line : node.command("INFO", "server").split("\r?\n")) {
			if (line.startsWith("uptime_in_seconds:")) {
				return Long.parseLong(line.substring("uptime_in_seconds:".length()).trim());
			}
		}
		return -1;
	}

	/** The voter's URI, its writes counted once its replica acknowledged them. */
	private static String waiting(SentinelManagedMaster voter) {
		return voter.uri().replace("#", "?waitReplicas=1#");
	}

	private static Redlock redlock(RedlockSettings settings, String... uris) {
		return Redlock.builder().nodes(List.of(uris)).settings(settings).build();
	}

}
