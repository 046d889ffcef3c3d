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
		assertThat(KeyLayout.PLAIN.refusal("{fence}x")).contains("reserved for fencing counters");
		assertThat(KeyLayout.PLAIN.refusal("fence")).isNull();
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
			if (KeyLayout.TAGGED.refusal(key) != null) {
				continue;
			}
			RawArgument stored = KeyLayout.TAGGED.storedKey(bytes(key));
			RawArgument counter = KeyLayout.TAGGED.counterKey(stored);
			assertThat(HashSlot.of(counter.getRaw())).as("the counter of %s", key)
				.isEqualTo(HashSlot.of(stored.getRaw()));
			assertThat(KeyLayout.TAGGED.storedKeyOfCounter(counter.toString())).as("the counter of %s", key)
				.isEqualTo(stored.toString());
			assertThat(KeyLayout.TAGGED.storedKeyOfCounter(stored.toString())).as("the lock %s", key).isNull();
			assertThat(stored.toString()).as("the lock %s", key).isNotEqualTo(LockScripts.FENCE_KEY_PREFIX);
		}
		assertThat(KeyLayout.TAGGED.storedKeyOfCounter("{fence}")).as("the marker").isNull();
		assertThat(KeyLayout.TAGGED.refusal("fence")).as("stored as the marker's key").contains("marker");
		assertThat(KeyLayout.TAGGED.refusal("{fence}x")).as("tagged by its digest: no counter's").isNull();
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
