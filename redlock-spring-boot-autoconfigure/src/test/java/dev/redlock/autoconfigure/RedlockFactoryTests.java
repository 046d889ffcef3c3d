package dev.redlock.autoconfigure;

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

}
