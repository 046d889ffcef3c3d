package dev.redlock.core;

import java.util.Arrays;
import java.util.Base64;
import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class LockValuesTests {

	@Test
	void valueIsTwentyRandomBytes() {
		byte[] decoded = Base64.getUrlDecoder().decode(LockValues.next().getRaw());
		assertThat(decoded).hasSize(20);
	}

	@Test
	void valuesAreUnique() {
		Set<RawArgument> values = new HashSet<>();
		for (int i = 0; i < 100_000; i++) {
			values.add(LockValues.next());
		}
		assertThat(values).hasSize(100_000);
	}

	@Test
	void bytesAreNotConstant() {
		// every byte position takes many values across acquisitions: the value is random,
		// not a counter
		int[][] seen = new int[20][256];
		for (int i = 0; i < 2_000; i++) {
			byte[] bytes = Base64.getUrlDecoder().decode(LockValues.next().getRaw());
			for (int b = 0; b < bytes.length; b++) {
				seen[b][bytes[b] & 0xFF]++;
			}
		}
		for (int[] position : seen) {
			long distinct = Arrays.stream(position).filter((count) -> count > 0).count();
			assertThat(distinct).isGreaterThan(200);
		}
	}

}
