package dev.redlock.core.internal.quarantine;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.redlock.core.Redlock;
import dev.redlock.core.internal.round.Quorum;
import dev.redlock.core.internal.round.VoterLayout;
import dev.redlock.core.internal.transport.RedisNodeUri;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One warning per {@code Redlock} when so many nodes are in restart quarantine that no
 * lock can be had, saying until when and what to do about nodes created just now.
 */
class QuarantineNoticeTests {

	private static final Duration QUARANTINE = Duration.ofSeconds(60);

	private final List<NodeQuarantine> nodes = List.of(quarantine(7001), quarantine(7002), quarantine(7003));

	private final QuarantineNotice notice = new QuarantineNotice(this.nodes, () -> VoterLayout.oneNodeEach(3),
			new Quorum(3), QUARANTINE,
			"Redlock[redis://127.0.0.1:7001, redis://127.0.0.1:7002, redis://127.0.0.1:7003]");

	@Test
	void aMinorityInQuarantineIsNoNews() {
		this.nodes.get(0).observe("run-a", 1L, System.nanoTime());
		assertThat(this.notice.nodeQuarantined()).isNull();
	}

	@Test
	void aMajorityInQuarantineSaysWhenTheFirstLockCanBeHadAndWhatToDo() {
		long now = System.nanoTime();
		this.nodes.get(0).observe("run-a", 1L, now);
		this.nodes.get(1).observe("run-b", 11L, now);
		String warning = this.notice.nodeQuarantined();
		assertThat(warning).contains("No lock can be acquired from Redlock[redis://127.0.0.1:7001",
				"2 of 3 nodes are in quarantine (restart) and a lock needs 2", "(in 50 s)", "restart quarantine (PT1M)",
				"redlock.restart-quarantine=0s", "appendfsync always", "docs/guarantees.md");
	}

	@Test
	void theSameEpisodeIsToldOnce() {
		long now = System.nanoTime();
		this.nodes.get(0).observe("run-a", 1L, now);
		this.nodes.get(1).observe("run-b", 1L, now);
		assertThat(this.notice.nodeQuarantined()).isNotNull();
		this.nodes.get(2).observe("run-c", 1L, now);
		assertThat(this.notice.nodeQuarantined()).isNull();
	}

	/**
	 * Three voters of two shard nodes each: a lock of some slots cannot be had when two
	 * of the three nodes its round goes to are in quarantine, and the warning names those
	 * slots; two nodes in quarantine that serve different slots leave a quorum for every
	 * key.
	 */
	@Test
	void withShardNodesTheNodesOfSomeSlotsInQuarantineStopTheLocksOfThoseSlots() {
		List<NodeQuarantine> shards = List.of(quarantine(7001), quarantine(7002), quarantine(7003), quarantine(7004),
				quarantine(7005), quarantine(7006));
		VoterLayout layout = VoterLayout.of(List.of(2, 2, 2));
		long now = System.nanoTime();
		shards.get(0).observe("run-a", 1L, now);
		shards.get(3).observe("run-b", 1L, now);
		assertThat(new QuarantineNotice(shards, () -> layout, new Quorum(3), QUARANTINE, "Redlock[shards]")
			.nodeQuarantined()).as("shard 0 of voter 0 and shard 1 of voter 1: every slot has two voters").isNull();

		shards.get(2).observe("run-c", 1L, now);
		String warning = new QuarantineNotice(shards, () -> layout, new Quorum(3), QUARANTINE, "Redlock[shards]")
			.nodeQuarantined();
		assertThat(warning).startsWith("No lock whose key is in slots 0-8191 can be acquired from Redlock[shards]")
			.contains("3 of 6 nodes are in quarantine (restart) and a lock needs 2 voters",
					"voters of 2, 2, 2 node(s)");
	}

	private static NodeQuarantine quarantine(int port) {
		return new NodeQuarantine(RedisNodeUri.parse("redis://127.0.0.1:" + port), QUARANTINE);
	}

}
