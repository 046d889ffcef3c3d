package dev.redlock.interceptor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;

import dev.redlock.NodeKeys;
import dev.redlock.annotation.DistributedLock;
import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.Redlock;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@code @DistributedLock} end to end: a Spring Boot application on three real Redis
 * nodes.
 */
@SpringBootTest(properties = { "orders.lock-ttl=7s", "redlock.default-wait-time=0s" })
@WithRedisNodes(count = 3)
class DistributedLockIntegrationTests {

	@Autowired
	private OrderService orders;

	@Autowired
	private Redlock redlock;

	@Autowired
	private RedisNodes nodes;

	@Autowired
	private RecordingTransactionManager transactions;

	@BeforeEach
	void clean() {
		this.orders.observations().clear();
		this.orders.calls().set(0);
	}

	@Test
	void keyUsesParameterNames() {
		this.orders.byName("42");
		assertThat(this.orders.observations()).containsExactly("redlock:order:42 held on a quorum");
		awaitNothingOnTheNodes();
	}

	@Test
	void keyUsesParameterPositionAndRoot() {
		this.orders.byPosition("7", 3);
		assertThat(this.orders.observations()).containsExactly("redlock:byPosition:7:3 held on a quorum");
	}

	@Test
	void emptyKeyLocksTheMethodName() {
		this.orders.whole();
		assertThat(this.orders.observations()).containsExactly("redlock:OrderService.whole held on a quorum");
	}

	@Test
	void keyCanReferToBeans() {
		this.orders.withBean("9");
		assertThat(this.orders.observations()).containsExactly("redlock:eu:9 held on a quorum");
	}

	@Test
	void ttlPlaceholderIsResolved() {
		this.orders.placeholderTtl("1");
		long pttl = this.orders.lastPttl();
		assertThat(pttl).isBetween(5_000L, 7_000L);
	}

	@Test
	void argumentValuesAreDataNotExpressions() {
		this.orders.byName("T(java.lang.System).exit(1)");
		assertThat(this.orders.observations())
			.containsExactly("redlock:order:T(java.lang.System).exit(1) held on a quorum");
	}

	@Test
	void exceptionFromTheMethodStillReleases() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.orders.failing("5")).withMessage("boom");
		assertThat(this.orders.observations()).containsExactly("redlock:order:5 held on a quorum");
		awaitNothingOnTheNodes();
	}

	@Test
	void notAcquiredThrowsAndTheMethodNeverRuns() {
		try (Lease held = this.redlock.acquire("order:13", Duration.ofSeconds(10), Duration.ZERO)) {
			assertThatExceptionOfType(LockNotAcquiredException.class).isThrownBy(() -> this.orders.byName("13"))
				.satisfies((ex) -> assertThat(ex.reason()).isEqualTo(LockNotAcquiredException.Reason.CONTENDED))
				.satisfies((ex) -> assertThat(ex.resource()).isEqualTo("order:13"));
			assertThat(this.orders.calls()).hasValue(0);
			assertThat(held.isValid()).isTrue();
		}
	}

	@Test
	void nullKeyIsAnErrorNamingMethodAndAttributeAndNothingRuns() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.orders.nullable(null))
			.withMessageContaining("OrderService.nullable(String)")
			.withMessageContaining("attribute 'key' = \"#value\"")
			.withMessageContaining("evaluated to null");
		assertThatIllegalArgumentException().isThrownBy(() -> this.orders.nullable(""))
			.withMessageContaining("empty string");
		assertThat(this.orders.calls()).hasValue(0);
		assertThat(NodeKeys.count(this.nodes)).isZero();
	}

	@Test
	void lockCoversTheTransactionCommit() {
		this.orders.transactional("21");
		assertThat(this.transactions.lockedAtCommit).containsExactly(true);
		awaitNothingOnTheNodes();
	}

	/**
	 * Waits until no node holds a key: a release returns once a quorum has deleted the
	 * key, and the last node deletes it a moment later.
	 */
	private void awaitNothingOnTheNodes() {
		NodeKeys.awaitTrue("no key left on any node", () -> NodeKeys.count(this.nodes) == 0);
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@EnableTransactionManagement
	@Import(OrderService.class)
	static class TestApplication {

		@Bean
		RecordingTransactionManager transactionManager(RedisNodes nodes) {
			return new RecordingTransactionManager(nodes);
		}

		@Bean
		Region region() {
			return new Region("eu");
		}

	}

	record Region(String code) {
	}

	static class OrderService {

		final List<String> observations = new ArrayList<>();

		final AtomicInteger calls = new AtomicInteger();

		volatile long lastPttl;

		private final RedisNodes nodes;

		OrderService(RedisNodes nodes) {
			this.nodes = nodes;
		}

		@DistributedLock(key = "'order:' + #orderId", ttl = "10s")
		public void byName(@Nullable String orderId) {
			observe("redlock:order:" + orderId);
		}

		@DistributedLock(key = "#root.methodName + ':' + #p0 + ':' + #a1")
		public void byPosition(String id, int quantity) {
			observe("redlock:byPosition:" + id + ":" + quantity);
		}

		@DistributedLock
		public void whole() {
			observe("redlock:OrderService.whole");
		}

		@DistributedLock(key = "@region.code() + ':' + #id")
		public void withBean(String id) {
			observe("redlock:eu:" + id);
		}

		@DistributedLock(key = "'ttl:' + #id", ttl = "${orders.lock-ttl}")
		public void placeholderTtl(String id) {
			// as a quorum sees it: the last node may never have been written
			this.lastPttl = NodeKeys.quorumPttl(this.nodes, "redlock:ttl:" + id);
		}

		@DistributedLock(key = "'order:' + #id")
		public void failing(String id) {
			observe("redlock:order:" + id);
			throw new IllegalArgumentException("boom");
		}

		@DistributedLock(key = "#value")
		public void nullable(@Nullable String value) {
			this.calls.incrementAndGet();
		}

		@Transactional
		@DistributedLock(key = "'tx:' + #id")
		public void transactional(String id) {
		}

		// state is read through methods: the bean is a class proxy whose own fields are
		// unused
		public List<String> observations() {
			return this.observations;
		}

		public AtomicInteger calls() {
			return this.calls;
		}

		public long lastPttl() {
			return this.lastPttl;
		}

		/**
		 * Records on how many nodes the key is: a quorum once the lock is taken (the
		 * round returns once two nodes granted it, the last may never be written).
		 */
		private void observe(String key) {
			this.calls.incrementAndGet();
			int held = 0;
			for (RedisNode node : this.nodes.nodes()) {
				if (node.command("GET", key) != null) {
					held++;
				}
			}
			this.observations.add(key + " held on " + ((held >= 2) ? "a quorum" : held + " nodes"));
		}

	}

	/** A transaction manager that checks, at commit, whether the lock is still held. */
	static class RecordingTransactionManager extends AbstractPlatformTransactionManager
			implements PlatformTransactionManager {

		private static final long serialVersionUID = 1L;

		final transient List<Boolean> lockedAtCommit = new ArrayList<>();

		private final transient RedisNodes nodes;

		RecordingTransactionManager(RedisNodes nodes) {
			this.nodes = nodes;
		}

		@Override
		protected Object doGetTransaction() {
			return new Object();
		}

		@Override
		protected void doBegin(Object transaction, TransactionDefinition definition) {
		}

		/** Whether a quorum holds the lock at commit. */
		@Override
		protected void doCommit(DefaultTransactionStatus status) {
			this.lockedAtCommit.add(NodeKeys.holding(this.nodes, "redlock:tx:21") >= 2);
		}

		@Override
		protected void doRollback(DefaultTransactionStatus status) {
		}

	}

}
