package dev.redlock.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;

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
	void valuesTakenByManyThreadsAtOnceAreUnique() throws Exception {
		// the bytes of many values are drawn at once: no two threads may take the same
		Set<RawArgument> values = ConcurrentHashMap.newKeySet();
		CountDownLatch start = new CountDownLatch(1);
		List<Thread> threads = new ArrayList<>();
		for (int t = 0; t < 4; t++) {
			Thread thread = new Thread(() -> {
				try {
					start.await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return;
				}
				for (int i = 0; i < 25_000; i++) {
					values.add(LockValues.next());
				}
			});
			thread.start();
			threads.add(thread);
		}
		start.countDown();
		for (Thread thread : threads) {
			thread.join();
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
