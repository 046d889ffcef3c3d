package dev.redlock.core.internal.round;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.protocol.HashSlot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Which node of each voter serves a key: one per voter, by the key's slot, the slots
 * split into equal ranges as a new cluster's are.
 */
class VoterLayoutTests {

	@Test
	void votersOfOneNodeEachSelectEveryNodeWithoutAnArray() {
		VoterLayout layout = VoterLayout.oneNodeEach(5);

		assertThat(layout.sharded()).isFalse();
		assertThat(layout.voters()).isEqualTo(5);
		assertThat(layout.nodes()).isEqualTo(5);
		assertThat(layout.select(key("any"))).isNull();
		assertThat(layout.voterOf(4)).isEqualTo(4);
	}

	@Test
	void aKeySelectsOneNodePerVoterTheOneWhoseRangeHoldsItsSlot() {
		VoterLayout layout = VoterLayout.of(List.of(1, 3, 2));
		assertThat(layout.sharded()).isTrue();
		assertThat(layout.nodes()).isEqualTo(6);
		assertThat(List.of(0, 1, 2, 3, 4, 5).stream().map(layout::voterOf)).containsExactly(0, 1, 1, 1, 2, 2);

		for (int i = 0; i < 2000; i++) {
			byte[] key = key("redlock:orders:" + i);
			int slot = HashSlot.of(key);
			boolean[] selected = layout.select(key);

			assertThat(selected).hasSize(6);
			assertThat(selected[0]).isTrue();
			// three shards: [0, 5461), [5461, 10922), [10922, 16384)
			int ofThree = (slot < 5461) ? 0 : (slot < 10922) ? 1 : 2;
			for (int shard = 0; shard < 3; shard++) {
				assertThat(selected[1 + shard]).as("slot " + slot + ", shard " + shard).isEqualTo(shard == ofThree);
			}
			int ofTwo = (slot < 8192) ? 0 : 1;
			assertThat(selected[4]).isEqualTo(ofTwo == 0);
			assertThat(selected[5]).isEqualTo(ofTwo == 1);
		}
	}

	@Test
	void theRangesCoverEverySlotOnceAndSplitThemEvenly() {
		for (int shards : new int[] { 1, 2, 3, 5, 7, 16, 1000 }) {
			int[] served = new int[shards];
			int previous = 0;
			for (int slot = 0; slot < HashSlot.SLOTS; slot++) {
				int shard = VoterLayout.shardOf(slot, shards);
				assertThat(shard).as("slot " + slot + " of " + shards + " shards").isBetween(previous, previous + 1);
				previous = shard;
				served[shard]++;
			}
			assertThat(previous).isEqualTo(shards - 1);
			for (int count : served) {
				assertThat(count).as(shards + " shards")
					.isBetween(HashSlot.SLOTS / shards, HashSlot.SLOTS / shards + 1);
			}
		}
	}

	@Test
	void theWarmUpWaitsForTheNodesOfTheSmallestQuorumOfVoters() {
		assertThat(VoterLayout.oneNodeEach(5).nodesOfAQuorum(3)).isEqualTo(3);
		assertThat(VoterLayout.of(List.of(2, 2, 2)).nodesOfAQuorum(2)).isEqualTo(4);
		assertThat(VoterLayout.of(List.of(3, 1, 2)).nodesOfAQuorum(2)).as("the voters of 1 and 2 nodes").isEqualTo(3);
	}

	@Test
	void aVoterNeedsANode() {
		assertThatIllegalArgumentException().isThrownBy(() -> VoterLayout.of(List.of(2, 0, 1)))
			.withMessageContaining("voter 1");
		assertThatIllegalArgumentException().isThrownBy(() -> VoterLayout.of(List.of()));
		assertThatIllegalArgumentException().isThrownBy(() -> VoterLayout.oneNodeEach(0));
	}

	private static byte[] key(String key) {
		return key.getBytes(StandardCharsets.UTF_8);
	}

}
