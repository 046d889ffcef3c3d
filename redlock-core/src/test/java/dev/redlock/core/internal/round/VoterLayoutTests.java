package dev.redlock.core.internal.round;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.protocol.HashSlot;
import dev.redlock.core.internal.protocol.KeyLayout;

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
	void aClusterVoterOfOneNodeStoresEveryLocksKeysInOneHashTagYetSelectsEveryNode() {
		List<short[]> oneNodeEach = Arrays.asList(null, null, null);
		VoterLayout plain = VoterLayout.ofSlotMaps(oneNodeEach, false);
		assertThat(plain.keys()).isEqualTo(KeyLayout.PLAIN);
		assertThat(plain.markerKey(0)).isEqualTo("{fence}");
		VoterLayout withCluster = VoterLayout.ofSlotMaps(oneNodeEach, true);
		assertThat(withCluster.sharded()).isFalse();
		assertThat(withCluster.select("{redlock:a}".getBytes(StandardCharsets.UTF_8))).isNull();
		assertThat(withCluster.keys()).as("as with a cluster of several shards").isEqualTo(KeyLayout.TAGGED);
		// a node serving every slot keeps its marker in the lowest tag's slot, 2853
		assertThat(withCluster.markerKey(0)).isEqualTo("{m0}:marker");
		assertThat(HashSlot.of("{m0}:marker".getBytes(StandardCharsets.UTF_8))).isEqualTo(2853);
		assertThat(VoterLayout.of(List.of(1, 3, 2)).keys()).isEqualTo(KeyLayout.TAGGED);
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
	void aMinorityOfVotersHoldsTheirNodesAtMostAsFaultyClocks() {
		assertThat(VoterLayout.oneNodeEach(5).faultyNodesAtMost(3)).isEqualTo(2);
		assertThat(VoterLayout.of(List.of(2, 2, 2)).faultyNodesAtMost(2)).isEqualTo(2);
		assertThat(VoterLayout.of(List.of(3, 1, 2)).faultyNodesAtMost(2)).as("the voter of 3 nodes").isEqualTo(3);
	}

	@Test
	void theKeyRangesCutTheSlotsWhereAnyVotersNodeChanges() {
		assertThat(VoterLayout.oneNodeEach(3).keyRanges()).singleElement().satisfies((range) -> {
			assertThat(range.firstSlot()).isZero();
			assertThat(range.lastSlot()).isEqualTo(HashSlot.SLOTS - 1);
			assertThat(range.nodes()).containsExactly(0, 1, 2);
		});

		VoterLayout layout = VoterLayout.of(List.of(1, 3, 2));
		List<VoterLayout.KeyRange> ranges = layout.keyRanges();
		assertThat(ranges).extracting(VoterLayout.KeyRange::firstSlot).containsExactly(0, 5461, 8192, 10922);
		assertThat(ranges).extracting(VoterLayout.KeyRange::lastSlot).containsExactly(5460, 8191, 10921, 16383);
		assertThat(ranges.get(0).nodes()).containsExactly(0, 1, 4);
		assertThat(ranges.get(1).nodes()).containsExactly(0, 2, 4);
		assertThat(ranges.get(2).nodes()).containsExactly(0, 2, 5);
		assertThat(ranges.get(3).nodes()).containsExactly(0, 3, 5);
		// each range's nodes are what a key of any of its slots selects
		for (int i = 0; i < 2000; i++) {
			byte[] key = key("redlock:orders:" + i);
			int slot = HashSlot.of(key);
			VoterLayout.KeyRange range = ranges.stream()
				.filter((r) -> r.firstSlot() <= slot && slot <= r.lastSlot())
				.findFirst()
				.orElseThrow();
			boolean[] selected = layout.select(key);
			assertThat(layout.keyRangeOf(key)).isEqualTo(ranges.indexOf(range));
			assertThat(layout.selection(range)).isEqualTo(selected);
			for (int node = 0; node < layout.nodes(); node++) {
				int candidate = node;
				boolean inRange = Arrays.stream(range.nodes()).anyMatch((n) -> n == candidate);
				assertThat(selected[node]).as("slot %d, node %d", slot, node).isEqualTo(inRange);
				assertThat(layout.serves(node, slot)).as("slot %d, node %d", slot, node).isEqualTo(inRange);
			}
		}
	}

	@Test
	void nodesOverlapWhenTheyServeASlotInCommon() {
		VoterLayout layout = VoterLayout.of(List.of(1, 3, 2));
		// voter 1's middle shard [5461, 10922) meets both of voter 2's, its first shard
		// only voter 2's first
		assertThat(layout.overlap(2, 4)).isTrue();
		assertThat(layout.overlap(2, 5)).isTrue();
		assertThat(layout.overlap(1, 4)).isTrue();
		assertThat(layout.overlap(1, 5)).isFalse();
		assertThat(layout.overlap(3, 4)).isFalse();
		assertThat(layout.overlap(0, 3)).as("a voter of one node serves every slot").isTrue();
	}

	@Test
	void nodesServeTheSlotsTheirSlotMapGivesThem() {
		// voter 1's first shard serves slots 0-99 and 200-8191, its second 100-199 and
		// the
		// rest, as after two migrations; voter 0 is one node
		short[] map = new short[HashSlot.SLOTS];
		Arrays.fill(map, 8192, HashSlot.SLOTS, (short) 1);
		Arrays.fill(map, 100, 200, (short) 1);
		VoterLayout layout = VoterLayout.ofSlotMaps(Arrays.asList(null, map, VoterLayout.equalRanges(2)));
		assertThat(layout.nodes()).isEqualTo(5);
		assertThat(layout.keyRanges()).extracting(Object::toString)
			.containsExactly("slots 0-99", "slots 100-199", "slots 200-8191", "slots 8192-16383");
		assertThat(layout.keyRanges().get(1).nodes()).containsExactly(0, 2, 3);
		for (int i = 0; i < 5000; i++) {
			byte[] key = key("redlock:orders:" + i);
			int slot = HashSlot.of(key);
			boolean[] selected = layout.select(key);
			int voter1 = (slot < 100 || (slot >= 200 && slot < 8192)) ? 1 : 2;
			assertThat(selected).as("slot %d", slot)
				.containsExactly(true, voter1 == 1, voter1 == 2, slot < 8192, slot >= 8192);
			assertThat(layout.serves(voter1, slot)).isTrue();
			assertThat(layout.selection(layout.keyRanges().get(layout.keyRangeOf(key)))).isEqualTo(selected);
		}
		assertThat(layout.overlap(2, 3)).as("slots 100-199").isTrue();
		for (int node = 0; node < layout.nodes(); node++) {
			String marker = layout.markerKey(node);
			assertThat(layout.serves(node, HashSlot.of(marker))).as("the marker %s of node %d", marker, node).isTrue();
		}
	}

	@Test
	void aNewerSlotMapMovesSlotsAndKeepsEveryNodesMarker() {
		VoterLayout layout = VoterLayout.ofSlotMaps(Arrays.asList(null, VoterLayout.equalRanges(2)));
		String[] markers = { layout.markerKey(0), layout.markerKey(1), layout.markerKey(2) };
		int markerSlot = HashSlot.of(markers[1]);
		// every slot to voter 1's second node, the first node's marker slot included
		short[] allToTheSecond = new short[HashSlot.SLOTS];
		Arrays.fill(allToTheSecond, (short) 1);

		VoterLayout moved = layout.withSlotMap(1, allToTheSecond);

		assertThat(moved.serves(1, markerSlot)).isFalse();
		assertThat(moved.serves(2, markerSlot)).isTrue();
		assertThat(moved.nodeServing(1, 0)).isEqualTo(2);
		assertThat(new String[] { moved.markerKey(0), moved.markerKey(1), moved.markerKey(2) }).isEqualTo(markers);
		assertThat(moved.keyRanges()).hasSize(1);
		assertThat(moved.select(key("redlock:orders:1"))).containsExactly(true, false, true);
		assertThat(layout.nodeServing(1, 0)).as("the layout replaced is unchanged").isEqualTo(1);
		assertThatIllegalArgumentException().isThrownBy(() -> layout.withSlotMap(0, allToTheSecond));
		short[] noSuchNode = allToTheSecond.clone();
		noSuchNode[5] = 2;
		assertThatIllegalArgumentException().isThrownBy(() -> layout.withSlotMap(1, noSuchNode));
	}

	@Test
	void aSlotMapServesEverySlotAndEachShardSome() {
		short[] unserved = VoterLayout.equalRanges(2);
		unserved[7] = -1;
		assertThatIllegalArgumentException().isThrownBy(() -> VoterLayout.ofSlotMaps(Arrays.asList(null, unserved)))
			.withMessageContaining("voter 1");
		short[] idle = new short[HashSlot.SLOTS];
		Arrays.fill(idle, 5000, HashSlot.SLOTS, (short) 2);
		assertThatIllegalArgumentException().as("shard 1 serves no slot")
			.isThrownBy(() -> VoterLayout.ofSlotMaps(Arrays.asList(idle, null)))
			.withMessageContaining("node 1 of voter 0");
		assertThatIllegalArgumentException().isThrownBy(() -> VoterLayout.ofSlotMaps(List.of(new short[10])));
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
