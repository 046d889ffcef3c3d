package dev.redlock.autoconfigure;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link NodeUris}: the sentinels of a Sentinel voter that binding split at commas are
 * put back together; nothing else is joined.
 */
class SplitSentinelVoterTests {

	@Test
	void theSentinelsAfterASentinelVoterAreRejoinedUpToItsMasterName() {
		assertThat(RedlockFactory.voters(List.of("redis-sentinel://u:p@s1:26379", "s2:26380", "s3#orders",
				"redis://x:6379", "rediss-sentinel://t1", "t2?sentinelMasterId=m", "redis://y:6379")))
			.containsExactly("redis-sentinel://u:p@s1:26379,s2:26380,s3#orders", "redis://x:6379",
					"rediss-sentinel://t1,t2?sentinelMasterId=m", "redis://y:6379");
	}

	@Test
	void aSentinelVotersQueryEndsItsSentinels() {
		assertThat(RedlockFactory
			.voters(List.of("redis-sentinel://s1", "s2?waitReplicas=1#orders", "redis://x:6379", "redis-sentinel://t1",
					"t2?sentinelMasterId=m&waitReplicas=2", "redis-sentinel://u1?waitReplicas=1", "u2#m")))
			.containsExactly("redis-sentinel://s1,s2?waitReplicas=1#orders", "redis://x:6379",
					"redis-sentinel://t1,t2?sentinelMasterId=m&waitReplicas=2", "redis-sentinel://u1?waitReplicas=1",
					"u2#m");
	}

	@Test
	void anElementWithoutASchemeAfterACompleteVoterIsLeftForTheParserToRefuse() {
		assertThat(RedlockFactory.voters(List.of("redis-sentinel://s1#orders", "s2:26379", "redis://x:6379", "y:1")))
			.containsExactly("redis-sentinel://s1#orders", "s2:26379", "redis://x:6379", "y:1");
	}

}
