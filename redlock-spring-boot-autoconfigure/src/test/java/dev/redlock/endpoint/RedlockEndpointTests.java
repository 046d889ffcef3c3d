package dev.redlock.endpoint;

import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.Show;

import dev.redlock.DocumentedJson;
import dev.redlock.NodeKeys;
import dev.redlock.TestRedlocks;
import dev.redlock.core.LockRequest;
import dev.redlock.core.Lease;
import dev.redlock.core.NodeStatistics;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockSettings;
import dev.redlock.endpoint.RedlockEndpoint.LeaseDescriptor;
import dev.redlock.endpoint.RedlockEndpoint.RedlockDescriptor;
import dev.redlock.endpoint.RedlockEndpoint.SettingsDescriptor;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code redlock} endpoint against three real Redis nodes.
 */
@WithRedisNodes(count = 3)
class RedlockEndpointTests {

	private RedisNodes nodes;

	@AutoClose
	private Redlock redlock;

	private RedlockEndpoint endpoint;

	@BeforeEach
	void buildRedlock(RedisNodes nodes) {
		this.nodes = nodes;
		// a node timeout of 1 s: single attempts must hear from a quorum within it on a
		// loaded machine, and a late reply within it counts as the node's answer
		this.redlock = TestRedlocks.on(nodes,
				new RedlockSettings("shop:", Duration.ofSeconds(20), Duration.ofMillis(1500), Duration.ofMillis(40),
						Duration.ofSeconds(1), 0.02, 7, 8, 2, 1, "endpoint-test", Duration.ZERO, 1024,
						Duration.ofMinutes(10), false, Duration.ofMillis(50), RedlockSettings.Transport.PIPELINED));
		this.endpoint = new RedlockEndpoint(this.redlock, Show.ALWAYS);
	}

	@Test
	void listsTheLeaseWhileHeldAndNothingAfterRelease() {
		assertThat(this.endpoint.redlock().leases()).isEmpty();
		Instant before = Instant.now();
		try (Lease lease = this.redlock.acquire(LockRequest.of("order:42", Duration.ofSeconds(10)).named("checkout"),
				Duration.ZERO)) {
			lease.extend();
			RedlockDescriptor held = this.endpoint.redlock();
			assertThat(held.leases()).hasSize(1);
			LeaseDescriptor descriptor = held.leases().get(0);
			assertThat(descriptor.name()).isEqualTo("checkout");
			assertThat(descriptor.resource()).isEqualTo("order:42");
			assertThat(Instant.parse(descriptor.acquiredAt())).isBetween(before.minusMillis(1), Instant.now());
			assertThat(descriptor.validityRemainingMs()).isBetween(1L, 10_000L);
			assertThat(descriptor.extensions()).isEqualTo(1);
			assertThat(descriptor.ttl()).isEqualTo("PT10S");
		}
		assertThat(this.endpoint.redlock().leases()).isEmpty();
	}

	@Test
	void showsTheEffectiveSettings() {
		SettingsDescriptor settings = this.endpoint.redlock().settings();
		assertThat(settings.nodes()).containsExactlyElementsOf(this.nodes.uris());
		assertThat(settings.quorum()).isEqualTo(2);
		assertThat(settings.keyPrefix()).isEqualTo("shop:");
		assertThat(settings.defaultTtl()).isEqualTo("PT20S");
		assertThat(settings.defaultWaitTime()).isEqualTo("PT1.5S");
		assertThat(settings.retryDelay()).isEqualTo("PT0.04S");
		assertThat(settings.nodeTimeout()).isEqualTo("PT1S");
		assertThat(settings.clockDriftFactor()).isEqualTo(0.02);
		assertThat(settings.maxExtensions()).isEqualTo(7);
	}

	@Test
	void theObservabilityPagesExampleShowsEveryFieldAndOnlyThose() throws IOException {
		Set<String> fields = new TreeSet<>();
		for (Class<?> descriptor : List.of(RedlockDescriptor.class, LeaseDescriptor.class, SettingsDescriptor.class,
				NodeStatistics.class)) {
			Arrays.stream(descriptor.getRecordComponents()).map(RecordComponent::getName).forEach(fields::add);
		}
		assertThat(DocumentedJson.fields("docs/observability.md", "\"leases\"")).isEqualTo(fields);
	}

	@Test
	void countsHowEachNodeAnswered() {
		this.nodes.node(2).kill();
		try (Lease lease = this.redlock.acquire(LockRequest.of("order:7", Duration.ofSeconds(5)).named("counted"),
				Duration.ZERO)) {
			try (Redlock other = TestRedlocks.on(this.nodes, this.redlock.settings())) {
				assertThat(other.tryAcquire("order:7", Duration.ofSeconds(5))).isEmpty();
			}
			assertThat(this.redlock.tryAcquire("order:7", Duration.ofSeconds(5))).isEmpty();
		}
		assertThat(this.endpoint.redlock().nodes()).extracting(NodeStatistics::node)
			.containsExactlyElementsOf(this.nodes.uris());
		// a round returns once its outcome is known: a reply that came later (node 0's
		// refusal, once node 1's had decided) is counted a moment after
		NodeKeys.awaitTrue("node 0's three replies counted",
				() -> answers(this.endpoint.redlock().nodes().get(0)) >= 3);
		NodeKeys.awaitTrue("the killed node's failure counted",
				() -> answers(this.endpoint.redlock().nodes().get(2)) >= 1);
		NodeStatistics first = this.endpoint.redlock().nodes().get(0);
		// granted the lease and released it; refused the second attempt (the other
		// instance has its own counters)
		assertThat(first.ok()).isEqualTo(2);
		assertThat(first.rejected()).isEqualTo(1);
		assertThat(first.timeouts() + first.errors()).isZero();
		NodeStatistics killed = this.endpoint.redlock().nodes().get(2);
		assertThat(killed.ok()).isZero();
		assertThat(killed.timeouts() + killed.errors()).isPositive();
	}

	private static long answers(NodeStatistics node) {
		return node.ok() + node.rejected() + node.timeouts() + node.errors();
	}

}
