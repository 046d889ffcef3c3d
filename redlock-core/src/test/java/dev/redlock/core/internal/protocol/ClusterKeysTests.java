package dev.redlock.core.internal.protocol;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.redlock.test.RedisCluster;
import dev.redlock.test.RedisNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * A key's hash slot as a cluster computes it, and the layout of a lock's keys on a
 * cluster voter: checked against a real cluster node ({@code CLUSTER KEYSLOT}, and a
 * script that declares a lock's two keys, which a cluster refuses with {@code CROSSSLOT}
 * unless they share a slot) for keys drawn from an alphabet rich in braces, and as pure
 * logic for the keys that could meet.
 */
class ClusterKeysTests {

	private static final String ALPHABET = "{}{}:ab-é€1";

	private static RedisCluster cluster;

	@BeforeAll
	static void startCluster() {
		cluster = RedisCluster.start(1, 0);
	}

	@AfterAll
	static void stopCluster() {
		cluster.close();
	}

	@Test
	void theSlotIsTheClustersForKeysWithAndWithoutHashTags() {
		List<String> keys = new ArrayList<>(List.of("foo", "{fence}", "fence", "bar", "123456789", "{}foo",
				"foo{}{bar}", "foo{{bar}}", "foo{bar}{zap}", "{", "}", "}{", "{a", "é"));
		keys.addAll(randomKeys(new Random(51), 1_500, 12));
		for (String key : keys) {
			assertThat(HashSlot.of(key)).as("the slot of %s", key).isEqualTo(cluster.slotOf(key));
		}
		assertThat(HashSlot.of("123456789")).as("CRC16/XMODEM's check value 0x31C3").isEqualTo(0x31C3);
	}

	@Test
	void aLocksKeysShareASlotTheClusterAcceptsInOneScript() {
		RedisNode node = cluster.primaryOf(0);
		String declaresBoth = "redis.call('set', KEYS[1], '1'); redis.call('set', KEYS[2], '1'); return 1";
		assertThatIllegalStateException().as("control: two keys of two slots in one script")
			.isThrownBy(() -> node.command("EVAL", declaresBoth, "2", "redlock:a", "{fence}redlock:a"))
			.withMessageStartingWith("CROSSSLOT");
		List<String> keys = new ArrayList<>(
				List.of("redlock:orders:42", "redlock:{tenant}:1", "redlock:a}b", "}", "{", "{}", "{x}", "x"));
		keys.addAll(randomKeys(new Random(52), 300, 10));
		for (String key : keys) {
			String lock = ClusterKeys.lockKey(key);
			String fence = ClusterKeys.fenceKey(key);
			assertThat(HashSlot.of(fence)).as("the counter of %s", key).isEqualTo(HashSlot.of(lock));
			assertThat(node.command("EVAL", declaresBoth, "2", lock, fence)).as("the keys of %s", key).isEqualTo("1");
		}
	}

	@Test
	void noTwoLocksShareAStoredKey() {
		String digestOfABraceKey = ClusterKeys.lockKey("a}b").substring(1, 41);
		// the empty key is tagged by its digest: the lock named by that digest must not
		// meet it
		List<String> keys = new ArrayList<>(List.of("x", "{x}", "x:fence", "{x}:fence", "x}", "{x", "a}b", "a}b:fence",
				digestOfABraceKey, "}", "{", "{}", ":fence", "", LockScripts.sha1Hex(""), "=", "}=", "=a}b"));
		keys.addAll(randomKeys(new Random(53), 5_000, 6));
		Set<String> distinct = new HashSet<>(keys);
		Set<String> stored = new HashSet<>();
		for (String key : distinct) {
			assertThat(stored.add(ClusterKeys.lockKey(key))).as("the lock key of %s is no other's", key).isTrue();
			assertThat(stored.add(ClusterKeys.fenceKey(key))).as("the counter of %s is no other's", key).isTrue();
		}
	}

	@Test
	void aStoredKeyTellsWhichLockItIsAndNoOtherKeyPassesForALocks() {
		List<String> keys = new ArrayList<>(
				List.of("x", "{x}", "x:fence", "x}:fence", "a}b", "}", "{", "{}", ":fence", "", "=", "}=", "fence"));
		keys.addAll(randomKeys(new Random(54), 5_000, 6));
		for (String key : keys) {
			assertThat(ClusterKeys.lockKeyOf(ClusterKeys.lockKey(key))).as("the stored key of %s", key).isEqualTo(key);
			assertThat(ClusterKeys.lockKeyOf(ClusterKeys.fenceKey(key))).as("the counter of %s", key).isNull();
			String asStored = ClusterKeys.lockKeyOf(key);
			if (asStored != null) {
				assertThat(ClusterKeys.lockKey(asStored)).as("%s, a lock's stored key as it is", key).isEqualTo(key);
			}
		}
		assertThat(ClusterKeys.lockKeyOf("{fence}:marker")).isNull();
		assertThat(ClusterKeys.lockKeyOf("{" + LockScripts.sha1Hex("other") + "}=a}b")).as("a digest of another key")
			.isNull();
	}

	@Test
	void aCallersHashTagIsNotHonouredSoLocksSpreadOverTheSlots() {
		assertThat(ClusterKeys.lockKey("redlock:orders:1")).isEqualTo("{redlock:orders:1}");
		assertThat(ClusterKeys.lockKey("redlock:{tenant}:1")).as("a key with a } is tagged by its digest")
			.matches("\\{[0-9a-f]{40}\\}=redlock:\\{tenant\\}:1");
		Set<Integer> slots = new HashSet<>();
		for (int i = 0; i < 100; i++) {
			slots.add(HashSlot.of(ClusterKeys.lockKey("redlock:{tenant}:" + i)));
		}
		assertThat(slots).as("100 locks of one tenant").hasSizeGreaterThan(90);
		assertThat(ClusterKeys.lockKey("redlock:a}b")).startsWith("{").endsWith("}=redlock:a}b").hasSize(43 + 11);
	}

	private static List<String> randomKeys(Random random, int count, int maxLength) {
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			int length = 1 + random.nextInt(maxLength);
			StringBuilder key = new StringBuilder();
			for (int c = 0; c < length; c++) {
				key.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
			}
			keys.add(key.toString());
		}
		return keys;
	}

}
