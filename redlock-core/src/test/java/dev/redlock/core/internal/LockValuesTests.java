package dev.redlock.core.internal;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.protocol.RawArgument;

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

	@Test
	void oneDrawServesManyValuesWhileItsBytesAreFresh() {
		CountingRandom random = new CountingRandom();
		LockValues values = new LockValues(random, () -> 1_000_000L);
		Set<RawArgument> taken = new HashSet<>();
		taken.add(values.take());
		assertThat(random.bytesDrawn).as("a lone value draws its own bytes").isEqualTo(20);
		for (int i = 0; i < 64; i++) {
			taken.add(values.take());
		}
		assertThat(random.draws).as("the next 64 share one draw").isEqualTo(2);
		taken.add(values.take());
		assertThat(random.draws).isEqualTo(3);
		assertThat(taken).hasSize(66);
	}

	@Test
	void drawnBytesExpireSoASnapshotRestoredTwiceDoesNotSignTwoLocksAlike() {
		// a process restored from a snapshot (a VM clone, a CRaC restore) finds its clock
		// moved on, or back: the bytes left from before the snapshot must not be used, or
		// every clone would hand out the same values
		CountingRandom random = new CountingRandom();
		AtomicLong clock = new AtomicLong(1_000_000);
		LockValues values = new LockValues(random, clock::get);
		values.take();
		values.take();
		assertThat(random.draws).isEqualTo(2);
		clock.addAndGet(LockValues.DRAWN_VALID_MILLIS);
		values.take();
		assertThat(random.draws).as("bytes still within their time").isEqualTo(2);
		clock.addAndGet(1);
		values.take();
		assertThat(random.draws).as("bytes past their time").isEqualTo(3);
		values.take();
		assertThat(random.draws).as("what was left before is not used").isEqualTo(4);
		clock.addAndGet(-5_000);
		values.take();
		assertThat(random.draws).as("a clock gone back").isEqualTo(5);
	}

	/** Counts its draws; each draw's bytes differ from the last's. */
	private static final class CountingRandom extends SecureRandom {

		private int draws;

		private long bytesDrawn;

		@Override
		public void nextBytes(byte[] bytes) {
			this.draws++;
			this.bytesDrawn += bytes.length;
			for (int i = 0; i < bytes.length; i++) {
				bytes[i] = (byte) (i * 31 + this.draws);
			}
		}

	}

}
