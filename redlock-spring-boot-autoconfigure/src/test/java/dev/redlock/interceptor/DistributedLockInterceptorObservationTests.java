package dev.redlock.interceptor;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.mock.env.MockEnvironment;

import dev.redlock.NodeKeys;
import dev.redlock.TestRedlocks;
import dev.redlock.annotation.DistributedLock;
import dev.redlock.core.Lease;
import dev.redlock.core.Redlock;
import dev.redlock.core.ReleaseOutcome;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * What the interceptor tells a {@link LockObserver}, and that a failing one changes
 * nothing, on real nodes.
 */
@WithRedisNodes(count = 3)
class DistributedLockInterceptorObservationTests {

	private final LockAttributeSource attributes = new LockAttributeSource(
			new MockEnvironment()::resolveRequiredPlaceholders);

	@Test
	void observerHearsTheCallInOrder(RedisNodes nodes) {
		List<String> heard = new ArrayList<>();
		LockObserver observer = (call) -> {
			heard.add("start " + call.name() + " " + call.resource());
			return new LockObservation() {
				@Override
				public void acquired(Lease lease) {
					heard.add("acquired");
				}

				@Override
				public void releasing() {
					heard.add("releasing");
				}

				@Override
				public void released(ReleaseOutcome outcome) {
					heard.add("released " + outcome);
				}

				@Override
				public void finished(@Nullable Throwable failure) {
					heard.add("finished " + failure);
				}
			};
		};
		try (Redlock redlock = TestRedlocks.on(nodes)) {
			Ledger ledger = proxy(redlock, observer, heard);
			ledger.post("a-1");
		}
		assertThat(heard).containsExactly("start ledger ledger:a-1", "acquired", "method", "releasing",
				"released RELEASED", "finished null");
	}

	@Test
	void failingObserverNeitherStopsTheMethodNorTheRelease(RedisNodes nodes) {
		List<String> heard = new ArrayList<>();
		LockObserver observer = (call) -> new LockObservation() {
			@Override
			public void acquired(Lease lease) {
				throw new IllegalStateException("observer broken");
			}

			@Override
			public void releasing() {
				throw new IllegalStateException("observer broken");
			}

			@Override
			public void released(ReleaseOutcome outcome) {
				throw new IllegalStateException("observer broken");
			}

			@Override
			public void finished(@Nullable Throwable failure) {
				throw new IllegalStateException("observer broken");
			}
		};
		try (Redlock redlock = TestRedlocks.on(nodes)) {
			Ledger ledger = proxy(redlock, observer, heard);
			ledger.post("b-1");
			assertThatIllegalArgumentException().isThrownBy(() -> ledger.post("boom")).withMessage("boom");
			assertThat(redlock.heldLeases()).isEmpty();
		}
		assertThat(heard).containsExactly("method", "method");
		// a release returns once a quorum has deleted the key, the last node may follow
		NodeKeys.awaitTrue("no key left on any node", () -> NodeKeys.count(nodes) == 0);
	}

	@Test
	void observerThatCannotStartLeavesTheCallUnobserved(RedisNodes nodes) {
		List<String> heard = new ArrayList<>();
		LockObserver observer = (call) -> {
			throw new IllegalStateException("observer broken");
		};
		try (Redlock redlock = TestRedlocks.on(nodes)) {
			proxy(redlock, observer, heard).post("c-1");
		}
		assertThat(heard).containsExactly("method");
		NodeKeys.awaitTrue("no key left on any node", () -> NodeKeys.count(nodes) == 0);
	}

	private Ledger proxy(Redlock redlock, LockObserver observer, List<String> heard) {
		ProxyFactory factory = new ProxyFactory(new Ledger(heard));
		factory.setProxyTargetClass(true);
		factory.addAdvice(new DistributedLockInterceptor(() -> redlock, this.attributes, null, () -> observer));
		return (Ledger) factory.getProxy();
	}

	static class Ledger {

		private final List<String> heard;

		Ledger(List<String> heard) {
			this.heard = heard;
		}

		@DistributedLock(name = "ledger", key = "'ledger:' + #entry", ttl = "10s", waitTime = "0s")
		public void post(String entry) {
			this.heard.add("method");
			if (entry.equals("boom")) {
				throw new IllegalArgumentException("boom");
			}
		}

	}

}
