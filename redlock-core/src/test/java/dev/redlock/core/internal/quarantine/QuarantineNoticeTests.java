package dev.redlock.core.internal.quarantine;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.redlock.core.Redlock;
import dev.redlock.core.internal.round.Quorum;
import dev.redlock.core.internal.transport.RedisNodeUri;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One warning per {@code Redlock} when so many nodes are in restart quarantine that no
 * lock can be had, saying until when and what to do about nodes created just now.
 */
class QuarantineNoticeTests {

	private static final Duration QUARANTINE = Duration.ofSeconds(60);

	private final List<NodeQuarantine> nodes = List.of(quarantine(7001), quarantine(7002), quarantine(7003));

	private final QuarantineNotice notice = new QuarantineNotice(this.nodes, new Quorum(this.nodes.size()), QUARANTINE,
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

	private static NodeQuarantine quarantine(int port) {
		return new NodeQuarantine(RedisNodeUri.parse("redis://127.0.0.1:" + port), QUARANTINE);
	}

}
