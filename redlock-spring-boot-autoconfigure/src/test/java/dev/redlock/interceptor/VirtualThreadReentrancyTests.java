package dev.redlock.interceptor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.task.AsyncTaskExecutor;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import dev.redlock.NodeKeys;
import dev.redlock.annotation.DistributedLock;
import dev.redlock.annotation.OnLocked;
import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reentrancy of {@code @DistributedLock} ({@link LockContext}, a thread local) with
 * virtual threads, on three real Redis nodes: what joins the outer lock and what does
 * not. The outer call runs on a virtual thread of Boot's {@code applicationTaskExecutor}
 * ({@code spring.threads.virtual.enabled=true}) and holds {@code 'doc:' + id}; the inner
 * calls lock the same key with a wait time of 0 s unless said otherwise, so an inner call
 * that does not join is refused at once.
 */
@SpringBootTest(properties = { "spring.threads.virtual.enabled=true", "redlock.default-wait-time=0s" })
@WithRedisNodes(count = 3)
@EnabledForJreRange(min = JRE.JAVA_21)
class VirtualThreadReentrancyTests {

	@Autowired
	private Outer outer;

	@Autowired
	private Inner inner;

	@Autowired
	private RedisNodes nodes;

	@Autowired
	@Qualifier("applicationTaskExecutor")
	private AsyncTaskExecutor executor;

	private ExecutorService otherVirtualThreads;

	@BeforeEach
	void clean() {
		this.inner.runs().clear();
		this.otherVirtualThreads = VirtualThreads.newExecutor("other-");
	}

	@AfterEach
	void stop() {
		this.otherVirtualThreads.shutdownNow();
	}

	@Test
	void aNestedCallOnTheSameKeyFromTheSameVirtualThreadJoinsTheOuterLease() throws Exception {
		// 32 virtual threads on 2 or so carriers, each parked inside its lock: contexts
		// follow the virtual thread
		List<Future<String>> calls = new ArrayList<>();
		for (int i = 0; i < 32; i++) {
			String id = "nested-" + i;
			calls.add(this.executor.submit(() -> this.outer.holding(id, () -> {
				String joined = this.inner.touch(id);
				// gives the carrier to another virtual thread: the context must follow
				// this one, not the carrier
				Thread.yield();
				String after = LockContext.currentLease().orElseThrow().resource();
				return joined + ", then " + after + ", virtual: " + VirtualThreads.isVirtual(Thread.currentThread());
			})));
		}
		for (int i = 0; i < calls.size(); i++) {
			assertThat(calls.get(i).get(30, TimeUnit.SECONDS))
				.isEqualTo("in doc:nested-" + i + ", hold count 2, then doc:nested-" + i + ", virtual: true");
			NodeKeys.awaitReleased(this.nodes, "redlock:doc:nested-" + i);
		}
	}

	@Test
	void anotherVirtualThreadDoesNotJoinTheLockButWaitsForItLikeAnyCaller() throws Exception {
		String seen = onVirtualThread(() -> this.outer.holding("1",
				() -> this.otherVirtualThreads.submit(() -> attempt(() -> this.inner.touch("1"))).get()));
		assertThat(seen).isEqualTo("refused: CONTENDED");
		assertThat(this.inner.runs()).isEmpty();
		NodeKeys.awaitReleased(this.nodes, "redlock:doc:1");
	}

	@Test
	void aCompletableFutureContinuationOnAnotherThreadDoesNotSeeTheOuterLock() throws Exception {
		List<String> seen = onVirtualThread(
				() -> this.outer
					.holding("2",
							() -> List.of(
									CompletableFuture
										.supplyAsync(() -> attempt(() -> this.inner.touch("2")),
												this.otherVirtualThreads)
										.join(),
									CompletableFuture.completedFuture("2")
										.thenApplyAsync((id) -> attempt(() -> this.inner.touch(id)),
												this.otherVirtualThreads)
										.join(),
									// the common pool's platform threads are no different
									CompletableFuture.supplyAsync(() -> attempt(() -> this.inner.touch("2"))).join(),
									// with onLocked = SKIP the inner method is skipped:
									// it returns null without running
									String.valueOf(CompletableFuture
										.supplyAsync(() -> this.inner.touchOrSkip("2"), this.otherVirtualThreads)
										.join()))));
		assertThat(seen).containsExactly("refused: CONTENDED", "refused: CONTENDED", "refused: CONTENDED", "null");
		assertThat(this.inner.runs()).isEmpty();
		NodeKeys.awaitReleased(this.nodes, "redlock:doc:2");
	}

	@Test
	void anOuterCallThatWaitsForTheOtherThreadWaitsOutTheInnerWaitTimeAndTheInnerCallFails() throws Exception {
		// a deadlock bounded by the inner call's wait time: it waits for the lock its own
		// caller holds, then gives up
		long start = System.nanoTime();
		String seen = onVirtualThread(() -> this.outer.holding("3",
				() -> CompletableFuture
					.supplyAsync(() -> attempt(() -> this.inner.touchWaiting("3")), this.otherVirtualThreads)
					.join()));
		Duration took = Duration.ofNanos(System.nanoTime() - start);
		assertThat(seen).isEqualTo("refused: CONTENDED");
		assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(500));
		assertThat(this.inner.runs()).isEmpty();
	}

	@Test
	void continuationsRunOnTheCallingVirtualThreadAndTasksHandedTheContextJoin() throws Exception {
		List<String> seen = onVirtualThread(() -> this.outer.holding("4", () -> {
			// LockContext.wrap, called on the holding thread, hands its context over to
			// another thread
			Callable<String> handedOver = LockContext.wrap(() -> this.inner.touch("4"));
			return List.of(
					// a continuation of a completed future runs at once, on the calling
					// thread
					CompletableFuture.completedFuture("4").thenApply(this.inner::touch).join(),
					this.otherVirtualThreads.submit(handedOver).get(),
					CompletableFuture.supplyAsync(() -> call(handedOver), this.otherVirtualThreads).join(),
					// wrapped too late: on the other thread, which has no context to hand
					// over
					CompletableFuture
						.supplyAsync(() -> attempt(LockContext.wrap(() -> this.inner.touch("4"))),
								this.otherVirtualThreads)
						.join());
		}));
		assertThat(seen).containsExactly("in doc:4, hold count 2", "in doc:4, hold count 2", "in doc:4, hold count 2",
				"refused: CONTENDED");
		assertThat(this.inner.runs()).hasSize(3);
		NodeKeys.awaitReleased(this.nodes, "redlock:doc:4");
	}

	@Test
	void aMonoSubscribedOnTheCallingThreadJoinsButOneSubscribedOnAnotherSchedulerDoesNot() throws Exception {
		List<String> seen = onVirtualThread(() -> this.outer.holding("5",
				() -> List.of(Mono.fromCallable(() -> this.inner.touch("5")).block(Duration.ofSeconds(10)),
						Mono.fromCallable(() -> attempt(() -> this.inner.touch("5")))
							.subscribeOn(Schedulers.fromExecutorService(this.otherVirtualThreads))
							.block(Duration.ofSeconds(10)),
						Mono.fromCallable(() -> attempt(() -> this.inner.touch("5")))
							.subscribeOn(Schedulers.boundedElastic())
							.block(Duration.ofSeconds(10)))));
		assertThat(seen).containsExactly("in doc:5, hold count 2", "refused: CONTENDED", "refused: CONTENDED");
		assertThat(this.inner.runs()).hasSize(1);
	}

	@Test
	void anAnnotatedMonoMethodNeverJoinsEvenWhenSubscribedOnTheHoldingThread() throws Exception {
		// reactive methods lock per subscription, on Reactor's bounded elastic threads:
		// there is no thread to follow
		String seen = onVirtualThread(() -> this.outer.holding("6",
				() -> attempt(() -> this.inner.touchLater("6").block(Duration.ofSeconds(10)))));
		assertThat(seen).isEqualTo("refused: CONTENDED");
		assertThat(this.inner.runs()).isEmpty();
		NodeKeys.awaitReleased(this.nodes, "redlock:doc:6");
		// on its own, the same call takes the lock, and its work runs without a lease in
		// LockContext
		assertThat(this.inner.touchLater("6").block(Duration.ofSeconds(10))).isEqualTo("ran, no lease in the context");
		assertThat(this.inner.runs()).containsExactly("6");
	}

	/** Runs the call on a virtual thread of Boot's executor, waiting at most 30 s. */
	private <T> T onVirtualThread(Callable<T> call) throws Exception {
		return this.executor.submit(() -> {
			if (!VirtualThreads.isVirtual(Thread.currentThread())) {
				throw new IllegalStateException("not a virtual thread: " + Thread.currentThread());
			}
			return call.call();
		}).get(30, TimeUnit.SECONDS);
	}

	/** The inner call's result, or why the lock was refused. */
	private static String attempt(Callable<String> call) {
		try {
			return call.call();
		}
		catch (LockNotAcquiredException ex) {
			return "refused: " + ex.reason();
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static <T> T call(Callable<T> call) {
		try {
			return call.call();
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import({ Outer.class, Inner.class })
	static class TestApplication {

	}

	static class Outer {

		/** Runs the work holding {@code 'doc:' + id}. */
		@DistributedLock(key = "'doc:' + #id", ttl = "10s")
		public <T> T holding(String id, Callable<T> work) throws Exception {
			return work.call();
		}

	}

	static class Inner {

		private final List<String> runs = Collections.synchronizedList(new ArrayList<>());

		List<String> runs() {
			return this.runs;
		}

		@DistributedLock(key = "'doc:' + #id", ttl = "10s")
		public String touch(String id) {
			return ran(id);
		}

		@DistributedLock(key = "'doc:' + #id", ttl = "10s", onLocked = OnLocked.SKIP)
		public String touchOrSkip(String id) {
			return ran(id);
		}

		@DistributedLock(key = "'doc:' + #id", ttl = "10s", waitTime = "500ms")
		public String touchWaiting(String id) {
			return ran(id);
		}

		@DistributedLock(key = "'doc:' + #id", ttl = "10s")
		public Mono<String> touchLater(String id) {
			return Mono.fromCallable(() -> ran(id));
		}

		/**
		 * Records the run; says which lease the context holds, and how many calls hold
		 * it.
		 */
		private String ran(String id) {
			this.runs.add(id);
			Lease lease = LockContext.currentLease().orElse(null);
			if (lease == null) {
				return "ran, no lease in the context";
			}
			return "in " + lease.resource() + ", hold count " + LockContext.holdCount(lease);
		}

	}

}
