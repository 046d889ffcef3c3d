package dev.redlock.core;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.protocol.LockScripts;
import dev.redlock.test.LatencyProxy;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.SentinelManagedMaster;
import dev.redlock.test.TestCertificates;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A voter that is a Sentinel-managed master (a master, a replica, three sentinels),
 * beside two standalone masters X and Y. The Redlock follows the voter's failover, and
 * the promoted replica, which may lack locks its master granted, counts towards no quorum
 * until they have expired: for a client that saw the old master, and for one that meets
 * the new master only after the failover.
 */
@WithRedisNodes(count = 2)
class SentinelVoterTests {

	private static final Duration QUARANTINE = Duration.ofSeconds(6);

	private static final RedlockSettings SETTINGS = TestSupport.withQuarantine(QUARANTINE);

	private static final String RESOURCE = "sentinel-voter";

	private static final String KEY = TestSupport.PREFIX + RESOURCE;

	@Test
	void aFailoverUnderAHeldLockGivesNoSecondHolderAndTheVoterCountsAgainAfterItsQuarantine(RedisNodes nodes)
			throws Exception {
		RedisNode x = nodes.node(0);
		RedisNode y = nodes.node(1);
		try (SentinelManagedMaster voter = SentinelManagedMaster.start("orders", 1, 3);
				LatencyProxy yForA = LatencyProxy.to(y, Duration.ZERO);
				Redlock a = redlock(voter.uri(), x.uri(), yForA.uri());
				Redlock b = redlock(voter.uri(), x.uri(), y.uri())) {
			RedisNode master = voter.master();
			RedisNode replica = voter.dataNodes().get(1);
			ForgetfulNodes.awaitCounting(a, b);
			assertThat(b.checkNodes().get(0)).satisfies((status) -> {
				assertThat(status.kind()).isEqualTo("sentinel");
				assertThat(status.master()).isEqualTo("127.0.0.1:" + master.port());
			});

			// the replica misses A's grant: its master refuses it a resync from now
			// (replication is asynchronous: a replica may lag by any amount)
			master.command("ACL", "SETUSER", "default", "-psync", "-sync");
			master.command("CLIENT", "KILL", "TYPE", "replica");
			TestSupport.awaitTrue("the replica lost its master", Duration.ofSeconds(10),
					() -> replica.command("INFO", "replication").contains("master_link_status:down"));
			// A is cut off from Y: its lock is on the voter's master and X only
			yForA.close();
			Lease first = a.acquire(RESOURCE, QUARANTINE, Duration.ofSeconds(5));
			long firstValidUntil = System.nanoTime() + first.remainingValidity().toNanos();
			assertThat(master.command("GET", KEY)).isNotNull();
			assertThat(y.command("GET", KEY)).isNull();

			// B waits for the lock throughout the failover
			CompletableFuture<Long> bAcquiredAt = CompletableFuture.supplyAsync(() -> {
				try (Lease second = b.acquire(RESOURCE, Duration.ofSeconds(2), QUARANTINE.plusSeconds(20))) {
					return System.nanoTime();
				}
			});
			RedisNode promoted = voter.failover();
			assertThat(promoted.port()).isEqualTo(replica.port());
			assertThat(promoted.command("GET", KEY)).as("the promoted replica lacks A's lock").isNull();
			TestSupport.awaitTrue("B follows the failover", Duration.ofSeconds(10),
					() -> ("127.0.0.1:" + promoted.port()).equals(b.checkNodes().get(0).master()));
			// B's waiter listens for releases on the new master (the former one, still
			// up,
			// is a replica now or soon)
			TestSupport.awaitTrue("B's waiter subscribed on the promoted master", Duration.ofSeconds(5),
					() -> promoted.command("PUBSUB", "NUMSUB", LockScripts.RELEASED_CHANNEL_PREFIX + KEY)
						.endsWith("\n1"));

			// without the quarantine B would have a quorum: the promoted replica and Y
			int attempts = ForgetfulNodes.refusedWhileValid(first, b, RESOURCE, Duration.ofSeconds(1));
			try (Redlock brandNew = redlock(voter.uri(), x.uri(), y.uri())) {
				attempts += ForgetfulNodes.refusedWhileValid(first, brandNew, RESOURCE, Duration.ofSeconds(1));
				NodeStatus seen = brandNew.checkNodes().get(0);
				assertThat(seen.master()).isEqualTo("127.0.0.1:" + promoted.port());
				assertThat(seen.counts()).as("the promoted replica counts for a client that meets it now").isFalse();
			}
			assertThat(attempts).isPositive();
			long acquiredAt = bAcquiredAt.get(QUARANTINE.toSeconds() + 30, TimeUnit.SECONDS);
			assertThat(acquiredAt - firstValidUntil).as("B's wait ended after A's lease, ns").isPositive();

			// once its quarantine has passed the voter counts: with Y down, the promoted
			// master and X make the quorum
			TestSupport.awaitTrue("the voter counts again", QUARANTINE.plusSeconds(10),
					() -> b.checkNodes().get(0).counts());
			y.kill();
			Optional<Lease> again = b.tryAcquire(RESOURCE, Duration.ofSeconds(5));
			assertThat(again).isPresent();
			assertThat(promoted.command("GET", KEY)).isNotNull();
			again.get().release();
		}
		finally {
			y.restart();
		}
	}

	@Test
	void aMasterThatDiesIsReplacedByTheSentinelsAndTheVoterCountsAgainAfterItsQuarantine(RedisNodes nodes)
			throws Exception {
		RedisNode x = nodes.node(0);
		RedisNode y = nodes.node(1);
		try (SentinelManagedMaster voter = SentinelManagedMaster.start("ledger", 1, 3);
				Redlock a = redlock(voter.uri(), x.uri(), y.uri());
				Redlock b = redlock(voter.uri(), x.uri(), y.uri())) {
			RedisNode replica = voter.dataNodes().get(1);
			ForgetfulNodes.awaitCounting(a, b);
			Lease first = a.acquire(RESOURCE, QUARANTINE, Duration.ofSeconds(5));
			long firstValidUntil = System.nanoTime() + first.remainingValidity().toNanos();

			long killedAt = System.nanoTime();
			voter.master().kill();
			// the sentinels find the master down after a second, then elect one of them
			// to promote the replica; both clients follow. An election whose votes split
			// is tried again only after twice the failover timeout (5 s), so a loaded
			// machine may need several
			TestSupport.awaitTrue("the replica promoted and followed", Duration.ofSeconds(60),
					() -> ("127.0.0.1:" + replica.port()).equals(a.checkNodes().get(0).master())
							&& ("127.0.0.1:" + replica.port()).equals(b.checkNodes().get(0).master()));
			System.out.println("[sentinel takeover] followed "
					+ Duration.ofNanos(System.nanoTime() - killedAt).toMillis() + " ms after the master was killed");
			assertThat(b.checkNodes().get(0).counts()).as("the promoted replica counts at once").isFalse();

			// a waiter on B takes the lock (on X and Y) once A has released it, not
			// before
			CompletableFuture<Long> bAcquiredAt = CompletableFuture.supplyAsync(() -> {
				try (Lease second = b.acquire(RESOURCE, Duration.ofSeconds(2), Duration.ofSeconds(15))) {
					return System.nanoTime();
				}
			});
			long firstEnded = Math.min(System.nanoTime(), firstValidUntil);
			first.release();
			assertThat(bAcquiredAt.get(30, TimeUnit.SECONDS) - firstEnded).as("B's wait ended after A's lease, ns")
				.isPositive();

			TestSupport.awaitTrue("the voter counts again", QUARANTINE.plusSeconds(10),
					() -> a.checkNodes().get(0).counts());
			y.kill();
			Optional<Lease> again = a.tryAcquire(RESOURCE, Duration.ofSeconds(5));
			assertThat(again).as("a lock on the promoted master and X").isPresent();
			assertThat(replica.command("GET", KEY)).isNotNull();
			again.get().release();
		}
		finally {
			y.restart();
		}
	}

	@Test
	void sentinelsThatWantAPasswordAreAskedWithTheVotersCredentials(RedisNodes nodes) {
		RedisNode x = nodes.node(0);
		RedisNode y = nodes.node(1);
		try (SentinelManagedMaster voter = SentinelManagedMaster.start("vault", 1, 2)) {
			RedisNode master = voter.master();
			for (RedisNode sentinel : voter.sentinels()) {
				sentinel.command("SENTINEL", "SET", "vault", "auth-pass", "s3cret");
			}
			voter.dataNodes().get(1).command("CONFIG", "SET", "masterauth", "s3cret");
			master.command("CONFIG", "SET", "requirepass", "s3cret");
			for (RedisNode sentinel : voter.sentinels()) {
				sentinel.command("ACL", "SETUSER", "default", "resetpass", ">s3cret");
			}
			String withPassword = voter.uri().replace("redis-sentinel://", "redis-sentinel://:s3cret@");

			try (Redlock withoutCredentials = Redlock.builder()
				.nodes(List.of(voter.uri(), x.uri(), y.uri()))
				.settings(TestSupport.SETTINGS)
				.build()) {
				NodeStatus refused = withoutCredentials.checkNodes().get(0);
				assertThat(refused.reachable()).isFalse();
				assertThat(refused.error()).contains("NOAUTH");
			}
			try (Redlock redlock = Redlock.builder()
				.nodes(List.of(withPassword, x.uri(), y.uri()))
				.settings(TestSupport.SETTINGS)
				.build()) {
				TestSupport.awaitTrue("the voter is reached through its sentinels", Duration.ofSeconds(10),
						() -> redlock.checkNodes().get(0).reachable());
				NodeStatus status = redlock.checkNodes().get(0);
				assertThat(status.master()).isEqualTo("127.0.0.1:" + master.port());
				assertThat(status.role()).isEqualTo("master");
				assertThat(status.node()).doesNotContain("s3cret");
				x.kill();
				Optional<Lease> lease = redlock.tryAcquire(RESOURCE, Duration.ofSeconds(5));
				assertThat(lease).as("a lock on the voter and Y").isPresent();
				lease.get().release();
			}
		}
		finally {
			x.restart();
		}
	}

	@Test
	void sentinelsWithAPasswordOfTheirOwnAreAskedWithTheSentinelCredentials(RedisNodes nodes) {
		try (SentinelManagedMaster voter = SentinelManagedMaster.start("ledger", 1, 2)) {
			for (RedisNode sentinel : voter.sentinels()) {
				sentinel.command("ACL", "SETUSER", "default", "resetpass", ">sentinel-s3cret");
			}
			List<String> uris = List.of(voter.uri(), nodes.node(0).uri(), nodes.node(1).uri());
			try (Redlock withoutCredentials = Redlock.builder().nodes(uris).settings(TestSupport.SETTINGS).build()) {
				NodeStatus refused = withoutCredentials.checkNodes().get(0);
				assertThat(refused.reachable()).isFalse();
				assertThat(refused.error()).contains("NOAUTH");
			}
			try (Redlock redlock = Redlock.builder()
				.nodes(uris)
				.sentinelCredentials(null, "sentinel-s3cret")
				.settings(TestSupport.SETTINGS)
				.build()) {
				TestSupport.awaitTrue("the voter is reached through its sentinels", Duration.ofSeconds(10),
						() -> redlock.checkNodes().get(0).reachable());
				NodeStatus status = redlock.checkNodes().get(0);
				assertThat(status.master()).isEqualTo("127.0.0.1:" + voter.master().port());
				assertThat(status.toString()).doesNotContain("sentinel-s3cret");
				assertThat(redlock.toString()).doesNotContain("sentinel-s3cret");
				Optional<Lease> lease = redlock.tryAcquire("own-sentinel-password", Duration.ofSeconds(5));
				assertThat(lease).as("a lock on all three voters").isPresent();
				lease.get().release();
			}
		}
	}

	@Test
	void aRedissSentinelVoterSpeaksTlsToItsSentinelsAndMastersThroughAFailover(RedisNodes nodes) throws Exception {
		RedisNode x = nodes.node(0);
		try (SentinelManagedMaster voter = SentinelManagedMaster.startTls("secure", 1, 3)) {
			// the URI names the sentinels' TLS ports only, and they name the data nodes'
			assertThat(voter.uri()).startsWith("rediss-sentinel://")
				.doesNotContain(":" + voter.sentinels().get(0).port() + ",");
			List<String> uris = List.of(voter.uri(), x.uri(), nodes.node(1).uri());
			try (Redlock untrusting = Redlock.builder().nodes(uris).settings(TestSupport.SETTINGS).build()) {
				NodeStatus refused = untrusting.checkNodes().get(0);
				assertThat(refused.reachable()).as("the kit's CA not trusted").isFalse();
			}
			try (Redlock redlock = Redlock.builder()
				.nodes(uris)
				.settings(TestSupport.SETTINGS)
				.tls(TlsSettings.of(TlsTests.trusting(TestCertificates.get())))
				.build()) {
				RedisNode master = voter.master();
				TestSupport.awaitTrue("the voter is reached through its sentinels", Duration.ofSeconds(10),
						() -> redlock.checkNodes().get(0).reachable());
				assertThat(redlock.checkNodes().get(0).master()).isEqualTo("127.0.0.1:" + master.tlsPort());
				x.kill();
				try (Lease lease = redlock.acquire(RESOURCE, Duration.ofSeconds(5), Duration.ofSeconds(5))) {
					assertThat(master.command("GET", KEY)).as("the lock on the voter's master").isNotNull();
				}

				RedisNode promoted = voter.failover();
				TestSupport.awaitTrue("the failover followed", Duration.ofSeconds(10),
						() -> ("127.0.0.1:" + promoted.tlsPort()).equals(redlock.checkNodes().get(0).master()));
				try (Lease lease = redlock.acquire(RESOURCE, Duration.ofSeconds(5), Duration.ofSeconds(5))) {
					assertThat(promoted.command("GET", KEY)).as("the lock on the promoted master").isNotNull();
				}
			}
		}
		finally {
			x.restart();
		}
	}

	@Test
	void theSentinelsAreAskedEverySecondOverConnectionsKeptFromOneQuestionToTheNext(RedisNodes nodes) {
		try (SentinelManagedMaster voter = SentinelManagedMaster.start("kept", 1, 2);
				Redlock redlock = Redlock.builder()
					.nodes(List.of(voter.uri(), nodes.node(0).uri(), nodes.node(1).uri()))
					.settings(TestSupport.SETTINGS)
					.build()) {
			TestSupport.awaitTrue("the voter is reached through its sentinels", Duration.ofSeconds(10),
					() -> redlock.checkNodes().get(0).reachable());
			// each sentinel is asked every second: a connection that asked and is at
			// least
			// 3 s old has been asked again since (one opened per question lives
			// milliseconds)
			for (RedisNode sentinel : voter.sentinels()) {
				TestSupport.awaitTrue("a kept connection of ours on sentinel " + sentinel.uri(), Duration.ofSeconds(20),
						() -> sentinel.command("CLIENT", "LIST")
							.lines()
							.anyMatch((client) -> client.contains(" name=redlock ") && client.contains(" cmd=sentinel")
									&& ageSeconds(client) >= 3));
			}
			Optional<Lease> lease = redlock.tryAcquire("kept-connections", Duration.ofSeconds(5));
			assertThat(lease).as("a lock on all three voters").isPresent();
			lease.get().release();
		}
	}

	/** The {@code age=} of a {@code CLIENT LIST} line, in seconds. */
	private static long ageSeconds(String client) {
		for (String field : client.split(" ")) {
			if (field.startsWith("age=")) {
				return Long.parseLong(field.substring(4));
			}
		}
		return -1;
	}

	@Test
	void aMasterNameTheSentinelsDoNotKnowIsAStartupErrorNamingTheVoter(RedisNodes nodes) {
		try (SentinelManagedMaster voter = SentinelManagedMaster.start("orders", 1, 1);
				Redlock redlock = redlock(voter.uri().replace("#orders", "#ordres"), nodes.node(0).uri(),
						nodes.node(1).uri())) {
			List<NodeFinding> errors = redlock.verifyNodes()
				.stream()
				.filter((finding) -> finding.severity() == NodeFinding.Severity.ERROR)
				.toList();
			assertThat(errors).singleElement().satisfies((error) -> {
				assertThat(error.node()).isEqualTo(0);
				assertThat(error.message()).contains("#ordres").contains("no master named 'ordres'");
			});
		}
	}

	@Test
	void aMasterThatRefusesRoleIsAWarningNamingTheVoterAndStillLocks(RedisNodes nodes) {
		try (SentinelManagedMaster voter = SentinelManagedMaster.start("orders", 1, 1)) {
			voter.master().command("ACL", "SETUSER", "default", "-role");
			// the quarantine off: the group has just started
			try (Redlock redlock = Redlock.builder()
				.nodes(List.of(voter.uri(), nodes.node(0).uri(), nodes.node(1).uri()))
				.settings(TestSupport.SETTINGS)
				.build()) {
				List<NodeFinding> findings = redlock.verifyNodes();

				assertThat(findings).noneMatch((finding) -> finding.severity() == NodeFinding.Severity.ERROR);
				assertThat(findings).filteredOn((finding) -> Integer.valueOf(0).equals(finding.node()))
					.singleElement()
					.satisfies((warning) -> {
						assertThat(warning.severity()).isEqualTo(NodeFinding.Severity.WARNING);
						assertThat(warning.message()).contains("#orders", "refuses ROLE", "NOPERM", "+role");
					});
				Optional<Lease> lease = redlock.tryAcquire("refused-role", Duration.ofSeconds(5));
				assertThat(lease).as("a lock on all three voters").isPresent();
				lease.get().release();
			}
		}
	}

	private static Redlock redlock(String... uris) {
		return Redlock.builder().nodes(List.of(uris)).settings(SETTINGS).build();
	}

}
