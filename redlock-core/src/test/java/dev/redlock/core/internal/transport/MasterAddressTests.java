package dev.redlock.core.internal.transport;

import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.redlock.core.TlsSettings;
import dev.redlock.test.RedisNode;
import dev.redlock.test.SentinelManagedMaster;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.exceptions.JedisConnectionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A Sentinel voter's master, on a real master, replica and sentinel: it is the one the
 * sentinel names and that says it is a master; an announcement of a server that is not a
 * master (out of date, as a sentinel may re-send one) is not followed; a connection that
 * finds a replica makes the next one ask the sentinel again; a failover is followed,
 * once.
 */
class MasterAddressTests {

	private static final int TIMEOUT_MILLIS = 2_000;

	private SentinelManagedMaster voter;

	private MasterAddress master;

	private final AtomicInteger moves = new AtomicInteger();

	@BeforeEach
	void start() {
		this.voter = SentinelManagedMaster.start("inventory", 1, 1);
		this.master = new MasterAddress(RedisNodeUri.parse(this.voter.uri()), "", TlsSettings.jvmDefault());
		this.master.onMove(this.moves::incrementAndGet);
	}

	@AfterEach
	void stop() {
		this.voter.close();
	}

	@Test
	void anAnnouncedServerThatIsNotAMasterIsNotFollowed() {
		RedisNode current = this.voter.master();
		RedisNode replica = this.voter.dataNodes().get(1);
		assertThat(this.master.address(TIMEOUT_MILLIS).address()).isEqualTo(address(current));
		int generation = this.master.generation();

		this.master.announced(address(replica), TIMEOUT_MILLIS);

		assertThat(this.master.known()).isEqualTo(address(current));
		assertThat(this.master.generation()).isEqualTo(generation);
		assertThat(this.moves).hasValue(0);
	}

	@Test
	void aConnectionToAReplicaIsRefusedAndTheNextAsksTheSentinelsAgain() {
		RedisNode current = this.voter.master();
		RedisNode replica = this.voter.dataNodes().get(1);
		MasterAddress.Current before = this.master.address(TIMEOUT_MILLIS);

		PipelinedConnection toReplica = new PipelinedConnection(address(replica),
				RedisNodeUri.parse(replica.uri()).clientConfig(TIMEOUT_MILLIS, "", TlsSettings.jvmDefault()));
		try {
			assertThatThrownBy(() -> this.master.verifyMaster(toReplica, before.generation()))
				.isInstanceOf(JedisConnectionException.class)
				.hasMessageContaining("is a slave now, not the master");
		}
		finally {
			toReplica.closeQuietly();
		}
		assertThat(this.master.known()).as("forgotten").isNull();

		MasterAddress.Current after = this.master.address(TIMEOUT_MILLIS);
		assertThat(after.address()).isEqualTo(address(current));
		assertThat(after.generation()).as("connections opened before are not reused")
			.isGreaterThan(before.generation());
		assertThat(this.moves).as("the same master: nothing to close").hasValue(0);
	}

	@Test
	void aFailoverIsFollowedOnce() {
		MasterAddress.Current before = this.master.address(TIMEOUT_MILLIS);
		RedisNode promoted = this.voter.failover();

		this.master.refresh(TIMEOUT_MILLIS);
		this.master.refresh(TIMEOUT_MILLIS);
		this.master.announced(address(promoted), TIMEOUT_MILLIS);

		assertThat(this.master.known()).isEqualTo(address(promoted));
		assertThat(this.master.generation()).isEqualTo(before.generation() + 1);
		assertThat(this.moves).hasValue(1);
	}

	@Test
	void aServerAnnouncedThatTheSentinelsDoNotNameIsNotFollowedWhileTheMasterStillIsOne() {
		RedisNode former = this.voter.master();
		this.master.address(TIMEOUT_MILLIS);
		RedisNode promoted = this.voter.failover();
		this.master.announced(address(promoted), TIMEOUT_MILLIS);
		assertThat(this.master.known()).isEqualTo(address(promoted));
		assertThat(this.moves).hasValue(1);
		// two masters, as before the sentinels demote the former one (or after a
		// partition)
		former.command("REPLICAOF", "NO", "ONE");
		assertThat(former.command("ROLE")).startsWith("master");

		this.master.announced(address(former), TIMEOUT_MILLIS);
		this.master.refresh(TIMEOUT_MILLIS);

		assertThat(this.master.known()).isEqualTo(address(promoted));
		assertThat(this.moves).as("no move back").hasValue(1);
	}

	@Test
	void oneSentinelNamingAnotherMasterIsNoMajorityWhileTheMasterStillIsOne() {
		try (SentinelManagedMaster three = SentinelManagedMaster.start("ledger", 1, 3)) {
			MasterAddress followed = new MasterAddress(RedisNodeUri.parse(three.uri()), "", TlsSettings.jvmDefault());
			AtomicInteger moved = new AtomicInteger();
			followed.onMove(moved::incrementAndGet);
			RedisNode former = three.master();
			followed.address(TIMEOUT_MILLIS);
			RedisNode promoted = three.failover();
			followed.refresh(TIMEOUT_MILLIS);
			assertThat(followed.known()).isEqualTo(address(promoted));
			assertThat(moved).hasValue(1);
			// the first sentinel is out of date: it names the former master, a master
			// again
			// (as when cut off with it); the third does not answer
			RedisNode stale = three.sentinels().get(0);
			stale.command("SENTINEL", "REMOVE", "ledger");
			former.command("REPLICAOF", "NO", "ONE");
			stale.command("SENTINEL", "MONITOR", "ledger", former.host(), String.valueOf(former.port()), "2");
			assertThat(stale.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "ledger"))
				.endsWith(String.valueOf(former.port()));
			three.sentinels().get(2).pause();

			followed.refresh(TIMEOUT_MILLIS);

			assertThat(followed.known()).as("one of two answers is no majority").isEqualTo(address(promoted));
			assertThat(moved).hasValue(1);
		}
	}

	private static HostAndPort address(RedisNode node) {
		return new HostAndPort(node.host(), node.port());
	}

}
