package dev.redlock.docs;

import java.util.UUID;

import dev.redlock.annotation.DistributedLock;
import dev.redlock.annotation.OnLocked;
import dev.redlock.interceptor.ReactiveLockContext;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import reactor.core.publisher.Mono;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The examples of {@code docs/annotation.md} and {@code docs/migration.md} that need
 * Reactor, Spring Integration or ShedLock, which this module has on its test classpath
 * and the sample app does not. {@code DocumentationSnippetsTests} (in the sample app)
 * checks that the Markdown shows exactly the tagged regions. Nothing here is run.
 */
class IntegrationSnippets {

	private final Warehouse warehouse = (sku, count, token) -> Mono.empty();

	// tag::reactive-fencing[]
	@DistributedLock(key = "'stock:' + #sku", ttl = "10s", fencing = true)
	public Mono<Void> restock(String sku, int count) {
		// a Mono<Long>, empty outside a locked subscription
		return ReactiveLockContext.fencingToken().flatMap((token) -> this.warehouse.write(sku, count, token));
	}
	// end::reactive-fencing[]

	// tag::leader-initiator[]
	@Bean
	LockRegistryLeaderInitiator leaderInitiator(LockRegistry<?> registry) {
		// the registry is the RedlockLockRegistry; the id must differ between instances:
		// a random one, or the pod's name from the environment
		return new LockRegistryLeaderInitiator(registry,
				new DefaultCandidate(UUID.randomUUID().toString(), "billing-leader"));
	}
	// end::leader-initiator[]

	// tag::shedlock[]
	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	@EnableSchedulerLock(defaultLockAtMostFor = "10m")
	class SchedulingConfiguration {

	}

	@Component
	class Jobs {

		@Scheduled(cron = "0 */5 * * * *")
		@SchedulerLock(name = "report", lockAtLeastFor = "30s")
		public void report() {
			// ...
		}

	}
	// end::shedlock[]

	class BeforeMigration {

		// tag::shedlock-migration[]
		// before
		@Scheduled(cron = "0 */5 * * * *")
		@SchedulerLock(name = "report", lockAtMostFor = "10m", lockAtLeastFor = "30s")
		public void report() {
			// ...
		}
		// end::shedlock-migration[]

	}

	class AfterMigration {

		// tag::shedlock-migration[]

		// after
		@Scheduled(cron = "0 */5 * * * *")
		@DistributedLock(name = "report", ttl = "10m", minHold = "30s", waitTime = "0s", onLocked = OnLocked.SKIP)
		public void report() {
			// ...
		}
		// end::shedlock-migration[]

	}

	interface Warehouse {

		Mono<Void> write(String sku, int count, long token);

	}

}
