package dev.redlock.autoconfigure;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RedlockFactoryTests {

	@Test
	void mapsCoreSettingNamesToProperties() {
		assertThat(RedlockFactory.propertyName("nodes")).isEqualTo("redlock.nodes");
		assertThat(RedlockFactory.propertyName("nodes[3]")).isEqualTo("redlock.nodes[3]");
		assertThat(RedlockFactory.propertyName("defaultTtl")).isEqualTo("redlock.default-ttl");
		assertThat(RedlockFactory.propertyName("clockDriftFactor")).isEqualTo("redlock.clock-drift-factor");
		assertThat(RedlockFactory.propertyName("poolMaxIdle")).isEqualTo("redlock.pool.max-idle");
	}

	@Test
	void putsBackTogetherTheSeedsOfAClusterVoterThatBindingSplit() {
		assertThat(RedlockFactory.voters(List.of("redis://10.0.0.1:6379", "redis-cluster://10.0.0.2:7000",
				"10.0.0.3:7000", " 10.0.0.4:7000", "rediss-cluster://u:p@10.0.1.2:7000", "10.0.1.3:7000",
				"redis-sentinel://10.0.0.5:26379", "10.0.0.6:26379#orders", "redis-cluster://10.0.2.1:7000",
				"10.0.2.2:7000?shards=3", "10.0.2.3:7000", "redis://10.0.0.7:6379")))
			.containsExactly("redis://10.0.0.1:6379", "redis-cluster://10.0.0.2:7000,10.0.0.3:7000,10.0.0.4:7000",
					"rediss-cluster://u:p@10.0.1.2:7000,10.0.1.3:7000",
					"redis-sentinel://10.0.0.5:26379,10.0.0.6:26379#orders",
					"redis-cluster://10.0.2.1:7000,10.0.2.2:7000?shards=3", "10.0.2.3:7000", "redis://10.0.0.7:6379");
	}

}
