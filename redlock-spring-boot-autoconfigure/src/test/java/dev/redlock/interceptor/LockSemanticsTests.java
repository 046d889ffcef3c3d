package dev.redlock.interceptor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import dev.redlock.NodeKeys;
import dev.redlock.annotation.DistributedLock;
import dev.redlock.annotation.OnLocked;
import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.Redlock;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What {@code @DistributedLock} does beyond one lock around one call, on three real Redis
 * nodes: failure strategies, conditions, asynchronous methods, reentrancy and several
 * keys at once.
 */
@SpringBootTest(properties = "redlock.default-wait-time=0s")
@WithRedisNodes(count = 3)
class LockSemanticsTests {

	private static final Duration TTL = Duration.ofSeconds(10);

	@Autowired
	private Shop shop;

	@Autowired
	private Outer outer;

	@Autowired
	private Bank bank;

	@Autowired
	private Redlock redlock;

	@Autowired
	private RedisNodes nodes;

	@BeforeEach
	void clean() {
		this.shop.runs().set(0);
	}

	@Test
	void skippedCallsReturnNothingOfTheirTypeWithoutRunning() {
		try (Lease held = this.redlock.acquire("item:1", TTL, Duration.ZERO)) {
			this.shop.restock("1");
			assertThat(this.shop.reserve("1")).isNull();
			assertThat(this.shop.find("1")).isEmpty();
			assertThat(this.shop.list("1")).isEmpty();
			assertThat(this.shop.count("1")).isNull();
			assertThat(this.shop.codes("1")).isEmpty();
			assertThat(this.shop.runs()).hasValue(0);
		}
		assertThat(this.shop.find("1")).contains("item 1");
		assertThat(this.shop.runs()).hasValue(1);
	}

	@Test
	void theFallbackRunsWithTheSameArgumentsWhenTheLockIsTaken() {
		assertThat(this.shop.price("2", 3)).isEqualTo("fresh price of 2 x3");
		try (Lease held = this.redlock.acquire("item:2", TTL, Duration.ZERO)) {
			assertThat(this.shop.price("2", 3)).isEqualTo("cached price of 2 x3");
		}
	}

	@Test
	void throwIsTheDefault() {
		try (Lease held = this.redlock.acquire("item:3", TTL, Duration.ZERO)) {
			assertThatExceptionOfType(LockNotAcquiredException.class).isThrownBy(() -> this.shop.buy("3", 1));
		}
	}

	@Test
	void theConditionDecidesWhetherTheCallIsLocked() {
		assertThat(this.shop.pay("4", 500)).isFalse();
		assertThat(this.shop.pay("4", 5_000)).isTrue();
		try (Lease held = this.redlock.acquire("payment:4", TTL, Duration.ZERO)) {
			// below the threshold the lock is not even asked for
			assertThat(this.shop.pay("4", 500)).isFalse();
			assertThatExceptionOfType(LockNotAcquiredException.class).isThrownBy(() -> this.shop.pay("4", 5_000));
		}
	}

	@Test
	void anAsynchronousMethodHoldsTheLockUntilItsFutureCompletes() throws Exception {
		CompletableFuture<String> work = new CompletableFuture<>();
		CompletableFuture<String> returned = this.shop.export("5", work);
		assertThat(returned).isSameAs(work);
		// the method has returned, the work goes on: the lock is still held, on a quorum
		assertThat(lockKeys("redlock:export:5")).isGreaterThanOrEqualTo(2);
		assertThatExceptionOfType(LockNotAcquiredException.class)
			.isThrownBy(() -> this.shop.export("5", new CompletableFuture<>()));
		work.complete("done");
		NodeKeys.awaitTrue("released when the future completed", () -> lockKeys("redlock:export:5") == 0);
		CompletableFuture<String> next = new CompletableFuture<>();
		assertThat(this.shop.export("5", next)).isSameAs(next);
		next.completeExceptionally(new IllegalStateException("export failed"));
		NodeKeys.awaitTrue("released when the future failed", () -> lockKeys("redlock:export:5") == 0);
	}

	@Test
	void aCancelledFutureReleasesTheLock() {
		CompletableFuture<String> work = this.shop.export("6", new CompletableFuture<>());
		assertThat(lockKeys("redlock:export:6")).isGreaterThanOrEqualTo(2);
		work.cancel(true);
		NodeKeys.awaitTrue("released when the future was cancelled", () -> lockKeys("redlock:export:6") == 0);
		assertThat(this.shop.export("6", CompletableFuture.completedFuture("again"))).isCompletedWithValue("again");
	}

	@Test
	void aNestedCallWithTheSameKeyJoinsTheOuterLeaseAndOnlyTheOutermostReleases() {
		// outer and inner are different beans, both locking 'doc:' + id; a wait of 0 s
		// would fail if inner waited
		List<String> seen = this.outer.edit("7");
		assertThat(seen).containsExactly("outer holds 1", "inner holds 2", "after inner: still on a quorum of nodes");
		NodeKeys.awaitReleased(this.nodes, "redlock:doc:7");
	}

	@Test
	void aTaskHandedTheContextJoinsTheLockAndOneWithoutItWaitsForIt() throws Exception {
		assertThat(this.outer.handOff("8", true)).isEqualTo("joined");
		assertThat(this.outer.handOff("8", false)).isEqualTo("refused: CONTENDED");
		NodeKeys.awaitReleased(this.nodes, "redlock:doc:8");
	}

	@Test
	void aFencedLockGivesEachCallAGreaterToken() {
		long first = this.shop.fencedWrite("9");
		long second = this.shop.fencedWrite("9");
		assertThat(first).isPositive();
		assertThat(second).isGreaterThan(first);
		assertThat(LockContext.fencingToken()).isEmpty();
	}

	@Test
	void transfersInBothDirectionsFromSixteenThreadsNeitherDeadlockNorLoseMoney() throws Exception {
		this.bank.open("A", 10_000);
		this.bank.open("B", 10_000);
		int threads = 16;
		int transfersEach = 25;
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		CountDownLatch start = new CountDownLatch(1);
		List<Future<Integer>> netToB = new ArrayList<>();
		try {
			for (int t = 0; t < threads; t++) {
				boolean aToB = t % 2 == 0;
				netToB.add(pool.submit(() -> {
					start.await();
					int net = 0;
					for (int i = 0; i < transfersEach; i++) {
						int amount = 1 + ThreadLocalRandom.current().nextInt(20);
						if (aToB) {
							this.bank.transfer("A", "B", amount);
							net += amount;
						}
						else {
							this.bank.transfer("B", "A", amount);
							net -= amount;
						}
					}
					return net;
				}));
			}
			start.countDown();
			int expectedToB = 0;
			for (Future<Integer> future : netToB) {
				expectedToB += future.get(60, TimeUnit.SECONDS);
			}
			assertThat(this.bank.balance("A")).isEqualTo(10_000 - expectedToB);
			assertThat(this.bank.balance("B")).isEqualTo(10_000 + expectedToB);
			assertThat(this.bank.transfers()).hasValue(threads * transfersEach);
			System.out.printf("%d transfers both ways from %d threads, net %d to B, max %d in the critical section%n",
					this.bank.transfers().get(), threads, expectedToB, this.bank.maxInside().get());
			assertThat(this.bank.maxInside()).hasValue(1);
		}
		finally {
			pool.shutdownNow();
		}
	}

	@Test
	void severalKeysAreAllOrNothing() {
		this.bank.open("C", 100);
		this.bank.open("D", 100);
		try (Lease held = this.redlock.acquire("acct:D", TTL, Duration.ZERO)) {
			assertThatExceptionOfType(LockNotAcquiredException.class)
				.isThrownBy(() -> this.bank.transferNow("C", "D", 10))
				.satisfies((ex) -> assertThat(ex.resource()).isEqualTo("acct:D"));
			// acct:C, acquired first in canonical order, was released again
			NodeKeys.awaitReleased(this.nodes, "redlock:acct:C");
		}
		this.bank.transferNow("C", "D", 10);
		assertThat(this.bank.balance("D")).isEqualTo(110);
	}

	private int lockKeys(String key) {
		return NodeKeys.holding(this.nodes, key);
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import({ Shop.class, Inner.class, Outer.class, Bank.class })
	static class TestApplication {

	}

	static class Shop {

		private final AtomicInteger runs = new AtomicInteger();

		/**
		 * How often a locked method ran (a method: the test holds a proxy, whose fields
		 * are not the bean's).
		 */
		AtomicInteger runs() {
			return this.runs;
		}

		@DistributedLock(key = "'item:' + #id", ttl = "10s", onLocked = OnLocked.SKIP)
		public void restock(String id) {
			this.runs.incrementAndGet();
		}

		@DistributedLock(key = "'item:' + #id", ttl = "10s", onLocked = OnLocked.SKIP)
		public String reserve(String id) {
			this.runs.incrementAndGet();
			return "reserved " + id;
		}

		@DistributedLock(key = "'item:' + #id", ttl = "10s", onLocked = OnLocked.SKIP)
		public Optional<String> find(String id) {
			this.runs.incrementAndGet();
			return Optional.of("item " + id);
		}

		@DistributedLock(key = "'item:' + #id", ttl = "10s", onLocked = OnLocked.SKIP)
		public List<String> list(String id) {
			this.runs.incrementAndGet();
			return List.of(id);
		}

		@DistributedLock(key = "'item:' + #id", ttl = "10s", onLocked = OnLocked.SKIP)
		public Integer count(String id) {
			this.runs.incrementAndGet();
			return 1;
		}

		@DistributedLock(key = "'item:' + #id", ttl = "10s", onLocked = OnLocked.SKIP)
		public String[] codes(String id) {
			this.runs.incrementAndGet();
			return new String[] { id };
		}

		@DistributedLock(key = "'item:' + #id", ttl = "10s", onLocked = OnLocked.FALLBACK, fallback = "cachedPrice")
		public String price(String id, int quantity) {
			return "fresh price of " + id + " x" + quantity;
		}

		String cachedPrice(String id, int quantity) {
			return "cached price of " + id + " x" + quantity;
		}

		@DistributedLock(key = "'item:' + #id", ttl = "10s")
		public void buy(String id, int quantity) {
			this.runs.incrementAndGet();
		}

		/** Locked only for large amounts; returns whether it ran under a lock. */
		@DistributedLock(key = "'payment:' + #id", ttl = "10s", condition = "#amount > 1000")
		public boolean pay(String id, int amount) {
			return LockContext.currentLease().isPresent();
		}

		/** Returns the token the write would carry to a fenced store. */
		@DistributedLock(key = "'ledger:' + #id", ttl = "10s", fencing = true)
		public long fencedWrite(String id) {
			return LockContext.fencingToken().orElseThrow();
		}

		@DistributedLock(key = "'export:' + #id", ttl = "10s")
		public CompletableFuture<String> export(String id, CompletableFuture<String> work) {
			return work;
		}

	}

	static class Inner {

		private final RedisNodes nodes;

		Inner(RedisNodes nodes) {
			this.nodes = nodes;
		}

		@DistributedLock(key = "'doc:' + #id", ttl = "10s")
		public String edit(String id) {
			Lease lease = LockContext.currentLease().orElseThrow();
			return "inner holds " + LockContext.holdCount(lease);
		}

		@DistributedLock(key = "'doc:' + #id", ttl = "10s")
		public String touch(String id) {
			return "joined";
		}

	}

	static class Outer {

		private final Inner inner;

		private final RedisNodes nodes;

		Outer(Inner inner, RedisNodes nodes) {
			this.inner = inner;
			this.nodes = nodes;
		}

		@DistributedLock(key = "'doc:' + #id", ttl = "10s")
		public List<String> edit(String id) {
			List<String> seen = new ArrayList<>();
			Lease lease = LockContext.currentLease().orElseThrow();
			seen.add("outer holds " + LockContext.holdCount(lease));
			seen.add(this.inner.edit(id));
			// a release would have left the key on one node at most; the lock was taken
			// once a quorum granted it, the last node may never have been written
			long onNodes = this.nodes.nodes()
				.stream()
				.filter((node) -> "1".equals(node.command("EXISTS", lease.redisKey())))
				.count();
			seen.add("after inner: still on " + ((onNodes >= 2) ? "a quorum of" : onNodes) + " nodes");
			return seen;
		}

		/** Calls the inner method on another thread, with or without the context. */
		@DistributedLock(key = "'doc:' + #id", ttl = "10s")
		public String handOff(String id, boolean withContext) throws Exception {
			ExecutorService executor = Executors.newSingleThreadExecutor();
			try {
				if (withContext) {
					return executor.submit(LockContext.wrap(() -> this.inner.touch(id))).get();
				}
				return executor.submit(() -> {
					try {
						return this.inner.touch(id);
					}
					catch (LockNotAcquiredException ex) {
						return "refused: " + ex.reason();
					}
				}).get();
			}
			finally {
				executor.shutdownNow();
			}
		}

	}

	static class Bank {

		private final Map<String, Integer> balances = new ConcurrentHashMap<>();

		private final AtomicInteger transfers = new AtomicInteger();

		private final AtomicInteger inside = new AtomicInteger();

		private final AtomicInteger maxInside = new AtomicInteger();

		AtomicInteger transfers() {
			return this.transfers;
		}

		AtomicInteger maxInside() {
			return this.maxInside;
		}

		void open(String account, int balance) {
			this.balances.put(account, balance);
		}

		int balance(String account) {
			return this.balances.get(account);
		}

		/**
		 * A read, a pause and a write per account: without the locks, concurrent
		 * transfers lose updates.
		 */
		@DistributedLock(keys = { "'acct:' + #from", "'acct:' + #to" }, ttl = "10s", waitTime = "30s")
		public void transfer(String from, String to, int amount) {
			this.maxInside.accumulateAndGet(this.inside.incrementAndGet(), Math::max);
			try {
				int fromBalance = this.balances.get(from);
				Thread.yield();
				this.balances.put(from, fromBalance - amount);
				int toBalance = this.balances.get(to);
				Thread.yield();
				this.balances.put(to, toBalance + amount);
				this.transfers.incrementAndGet();
			}
			finally {
				this.inside.decrementAndGet();
			}
		}

		@DistributedLock(keys = { "'acct:' + #from", "'acct:' + #to" }, ttl = "10s", waitTime = "0s")
		public void transferNow(String from, String to, int amount) {
			this.balances.merge(from, -amount, Integer::sum);
			this.balances.merge(to, amount, Integer::sum);
		}

	}

}
