package dev.redlock.integration;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.integration.leader.AbstractCandidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.support.locks.LockRegistry;

import dev.redlock.test.RedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spring Integration's leader election on the Redlock lock registry, with two application
 * contexts on the same three nodes: one leader at a time, and leadership moves to the
 * other when the leader's context stops.
 */
class LeaderElectionTests {

	@Test
	void oneLeaderAtATimeAndLeadershipMovesWhenTheLeaderStops() throws InterruptedException {
		Leadership leadership = new Leadership();
		try (RedisNodes nodes = RedisNodes.start(3);
				ConfigurableApplicationContext first = start(nodes, leadership, "first");
				ConfigurableApplicationContext second = start(nodes, leadership, "second")) {
			assertThat(first.getBean(LockRegistry.class)).isInstanceOf(RedlockLockRegistry.class);
			String leader = leadership.awaitLeaderOtherThan(null, 10);
			// both run their heartbeats for a while: the other never becomes leader
			// meanwhile
			assertThat(leadership.awaitLeaderOtherThan(leader, 2)).isNull();
			(leader.equals("first") ? first : second).close();
			String next = leadership.awaitLeaderOtherThan(leader, 10);
			System.out.printf("leader election on Redlock: %s, then %s after %s stopped; most leaders at once: %d%n",
					leader, next, leader, leadership.mostAtOnce());
			assertThat(next).isNotNull().isNotEqualTo(leader);
			assertThat(leadership.mostAtOnce()).isEqualTo(1);
		}
	}

	private static ConfigurableApplicationContext start(RedisNodes nodes, Leadership leadership, String instance) {
		return new SpringApplicationBuilder(ElectionApplication.class).web(WebApplicationType.NONE)
			.initializers((context) -> context.getBeanFactory().registerSingleton("leadership", leadership))
			.run("--redlock.nodes=" + String.join(",", nodes.uris()), "--redlock.restart-quarantine=0s",
					"--redlock.default-ttl=5s", "--instance=" + instance, "--spring.main.banner-mode=off");
	}

	/**
	 * Who leads, as the candidates are told; the most leaders there ever were at once.
	 */
	static final class Leadership {

		private final Set<String> leaders = new HashSet<>();

		private int mostAtOnce;

		/**
		 * Spring Integration unlocks first and publishes the revocation after, so the
		 * next leader may be granted in between: a previous leader that is revoked within
		 * a second of the grant does not count as a second leader at once (a real second
		 * leader would keep leading, heartbeat after heartbeat).
		 */
		synchronized void granted(String instance) {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
			try {
				while (!this.leaders.isEmpty() && System.nanoTime() - deadline < 0) {
					TimeUnit.NANOSECONDS.timedWait(this, deadline - System.nanoTime());
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			this.leaders.add(instance);
			this.mostAtOnce = Math.max(this.mostAtOnce, this.leaders.size());
			notifyAll();
		}

		synchronized void revoked(String instance) {
			this.leaders.remove(instance);
			notifyAll();
		}

		synchronized int mostAtOnce() {
			return this.mostAtOnce;
		}

		/**
		 * Waits for a leader other than the given one; {@code null} if there is none
		 * within the time.
		 */
		synchronized String awaitLeaderOtherThan(String excluded, long seconds) throws InterruptedException {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
			while (true) {
				for (String leader : this.leaders) {
					if (!leader.equals(excluded)) {
						return leader;
					}
				}
				long left = deadline - System.nanoTime();
				if (left <= 0) {
					return null;
				}
				TimeUnit.NANOSECONDS.timedWait(this, left);
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class ElectionApplication {

		@Bean
		LockRegistryLeaderInitiator leaderInitiator(LockRegistry<?> registry, Leadership leadership,
				Environment environment) {
			String instance = environment.getRequiredProperty("instance");
			LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry,
					new AbstractCandidate(instance, "leader") {

						@Override
						public void onGranted(Context context) {
							leadership.granted(instance);
						}

						@Override
						public void onRevoked(Context context) {
							leadership.revoked(instance);
						}

					});
			initiator.setHeartBeatMillis(200);
			initiator.setBusyWaitMillis(50);
			return initiator;
		}

	}

}
