package dev.redlock.core.internal.protocol;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The two ways nodes store a lock's keys: as they are when every voter is one node
 * (today's keys, unchanged by an upgrade), in one hash tag when some voter has several
 * shard nodes. A counter is told from a lock, and from the marker, in both.
 */
class KeyLayoutTests {

	private static final String ALPHABET = "{}:fenc=ab}";

	@Test
	void plainKeysAreTheLockKeyAndItsCounterBehindTheFencePrefix() {
		RawArgument stored = KeyLayout.PLAIN.storedKey(bytes("redlock:orders:42"));
		assertThat(stored.toString()).isEqualTo("redlock:orders:42");
		assertThat(KeyLayout.PLAIN.counterKey(stored).toString()).isEqualTo("{fence}redlock:orders:42");
		assertThat(KeyLayout.PLAIN.storedKeyOfCounter("{fence}redlock:orders:42")).isEqualTo("redlock:orders:42");
		assertThat(KeyLayout.PLAIN.storedKeyOfCounter("{fence}")).as("the marker").isNull();
		assertThat(KeyLayout.PLAIN.refusal(bytes("{fence}x"))).contains("reserved for fencing counters");
		assertThat(KeyLayout.PLAIN.refusal(bytes("fence"))).isNull();
	}

	@Test
	void taggedKeysShareTheLockKeysSlotAndACounterIsNeverALockOrTheMarker() {
		List<String> keys = new ArrayList<>(List.of("redlock:orders:42", "x:fence", "x}:fence", "a}b", "{fence}", ""));
		Random random = new Random(55);
		for (int i = 0; i < 3_000; i++) {
			StringBuilder key = new StringBuilder();
			for (int c = random.nextInt(8); c >= 0; c--) {
				key.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
			}
			keys.add(key.toString());
		}
		for (String key : keys) {
			if (KeyLayout.TAGGED.refusal(bytes(key)) != null) {
				continue;
			}
			RawArgument stored = KeyLayout.TAGGED.storedKey(bytes(key));
			RawArgument counter = KeyLayout.TAGGED.counterKey(stored);
			assertThat(HashSlot.of(counter.getRaw())).as("the counter of %s", key)
				.isEqualTo(HashSlot.of(stored.getRaw()));
			assertThat(KeyLayout.TAGGED.storedKeyOfCounter(counter.toString())).as("the counter of %s", key)
				.isEqualTo(stored.toString());
			assertThat(KeyLayout.TAGGED.storedKeyOfCounter(stored.toString())).as("the lock %s", key).isNull();
			assertThat(stored.toString()).as("the lock %s", key).doesNotEndWith(KeyLayout.MARKER_SUFFIX);
			assertThat(KeyLayout.TAGGED.refusal(bytes(key))).as("no lock key is refused").isNull();
		}
		assertThat(KeyLayout.TAGGED.storedKeyOfCounter("{fence}")).as("the marker").isNull();
	}

	@Test
	void aNodesMarkerKeyIsInItsOwnSlotsAndNeverALocksOrACounters() {
		assertThat(KeyLayout.PLAIN.markerKey(0, HashSlot.SLOTS - 1)).isEqualTo("{fence}");
		Random random = new Random(56);
		List<int[]> ranges = new ArrayList<>(List.of(new int[] { 0, 0 }, new int[] { 16383, 16383 },
				new int[] { 0, 5460 }, new int[] { 5461, 10922 }, new int[] { 10923, 16383 }));
		for (int i = 0; i < 200; i++) {
			int first = random.nextInt(HashSlot.SLOTS);
			ranges.add(new int[] { first, Math.min(HashSlot.SLOTS - 1, first + random.nextInt(50)) });
		}
		for (int[] range : ranges) {
			String marker = KeyLayout.TAGGED.markerKey(range[0], range[1]);
			assertThat(HashSlot.of(marker)).as("the marker %s of slots %d-%d", marker, range[0], range[1])
				.isBetween(range[0], range[1]);
			assertThat(ClusterKeys.lockKeyOf(marker)).as("%s as a lock's", marker).isNull();
			assertThat(KeyLayout.TAGGED.storedKeyOfCounter(marker)).as("%s as a counter", marker).isNull();
			assertThat(KeyLayout.TAGGED.markerKey(range[0], range[1])).as("the same each time").isEqualTo(marker);
		}
	}

	@Test
	void theLayoutFollowsWhetherSomeVoterHasSeveralNodes() {
		assertThat(KeyLayout.of(false)).isSameAs(KeyLayout.PLAIN);
		assertThat(KeyLayout.of(true)).isSameAs(KeyLayout.TAGGED);
	}

	private static byte[] bytes(String key) {
		return key.getBytes(StandardCharsets.UTF_8);
	}

}
