package dev.redlock.core.internal.transport;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.redlock.core.InvalidRedlockConfigurationException;
import dev.redlock.core.TlsSettings;
import redis.clients.jedis.HostAndPort;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RedisNodeUriTests {

	@Test
	void sentinelsOfTheirOwnCredentialsAreAskedWithThemAndNeverShowTheirPassword() {
		RedisNodeUri voter = RedisNodeUri.parse("redis-sentinel://:master-pw@s1:26379,s2#orders")
			.withSentinelCredentials("watcher", "sentinel-pw");
		SentinelGroup group = voter.sentinel();
		assertThat(group.username()).isEqualTo("watcher");
		assertThat(group.password()).isEqualTo("sentinel-pw");
		var sentinels = voter.sentinelClientConfig(1_000, "", TlsSettings.jvmDefault(), false);
		assertThat(sentinels.getUser()).isEqualTo("watcher");
		assertThat(sentinels.getPassword()).isEqualTo("sentinel-pw");
		var master = voter.clientConfig(1_000, "", TlsSettings.jvmDefault());
		assertThat(master.getPassword()).isEqualTo("master-pw");
		assertThat(List.of(voter.toString(), voter.redacted(), group.toString(), voter.name()))
			.allSatisfy((text) -> assertThat(text).doesNotContain("pw"));
		RedisNodeUri standalone = RedisNodeUri.parse("redis://h:6379");
		assertThat(standalone.withSentinelCredentials("watcher", "sentinel-pw")).isSameAs(standalone);
	}

	@Test
	void parsesHostAndPort() {
		RedisNodeUri uri = RedisNodeUri.parse("redis://localhost:6380");
		assertThat(uri.host()).isEqualTo("localhost");
		assertThat(uri.port()).isEqualTo(6380);
		assertThat(uri.tls()).isFalse();
		assertThat(uri.user()).isNull();
		assertThat(uri.password()).isNull();
		assertThat(uri.database()).isZero();
	}

	@Test
	void defaultsToPort6379() {
		assertThat(RedisNodeUri.parse("redis://10.0.0.5").port()).isEqualTo(6379);
	}

	@Test
	void parsesUserPasswordDatabaseAndTls() {
		RedisNodeUri uri = RedisNodeUri.parse("rediss://app:s3cret@redis.example:6390/3");
		assertThat(uri.tls()).isTrue();
		assertThat(uri.user()).isEqualTo("app");
		assertThat(uri.password()).isEqualTo("s3cret");
		assertThat(uri.database()).isEqualTo(3);
	}

	@Test
	void passwordWithoutUser() {
		RedisNodeUri uri = RedisNodeUri.parse("redis://:s3cret@h:1");
		assertThat(uri.user()).isNull();
		assertThat(uri.password()).isEqualTo("s3cret");
		assertThat(RedisNodeUri.parse("redis://s3cret@h:1").password()).isEqualTo("s3cret");
	}

	@Test
	void toStringHidesCredentials() {
		RedisNodeUri uri = RedisNodeUri.parse("rediss://app:s3cret@redis.example:6390/3");
		assertThat(uri.toString()).isEqualTo("rediss://redis.example:6390/3").doesNotContain("s3cret", "app");
		assertThat(uri.redacted()).isEqualTo(uri.toString());
	}

	@Test
	void ipv6LiteralKeepsBrackets() {
		assertThat(RedisNodeUri.parse("redis://[::1]:7000").redacted()).isEqualTo("redis://[::1]:7000");
	}

	@ParameterizedTest
	@ValueSource(strings = { "http://h:1", "localhost:6379", "redis://", "redis://h:1/x", "redis://h:1?timeout=1",
			"redis://h:99999", "redis://bad host:1", "" })
	void rejectsMalformedUris(String text) {
		assertThatIllegalArgumentException().isThrownBy(() -> RedisNodeUri.parse(text));
	}

	@Test
	void parsesAClusterVoterWithSeveralSeedsAndTheNodesCredentials() {
		RedisNodeUri uri = RedisNodeUri.parse("rediss-cluster://app:s3cret@10.0.0.1:7000,[::1],c3.example:7002/0");
		assertThat(uri.cluster()).isNotNull();
		assertThat(uri.cluster().seeds()).extracting(SentinelGroup::format)
			.containsExactly("10.0.0.1:7000", "[::1]:6379", "c3.example:7002");
		assertThat(uri.tls()).isTrue();
		assertThat(uri.user()).isEqualTo("app");
		assertThat(uri.password()).isEqualTo("s3cret");
		assertThat(uri.kind()).isEqualTo("cluster");
		assertThat(uri.name()).isEqualTo("cluster@10.0.0.1:7000");
		assertThat(uri.redacted()).isEqualTo("rediss-cluster://10.0.0.1:7000,[::1]:6379,c3.example:7002");
		assertThat(uri.toString()).doesNotContain("s3cret");
	}

	@Test
	void aClusterVotersShardNodeSaysWhichShardAndSlots() {
		RedisNodeUri voter = RedisNodeUri.parse("redis-cluster://:s3cret@10.0.0.1:7000,10.0.0.2:7000");
		RedisNodeUri shard = voter.inShard(new HostAndPort("10.0.0.2", 7000), voter.cluster()
			.shard(1, 3, List.of(new ClusterSlots.SlotRange(5461, 10922), new ClusterSlots.SlotRange(12000, 12000))));
		assertThat(shard.hostAndPort()).isEqualTo("10.0.0.2:7000");
		assertThat(shard.password()).isEqualTo("s3cret");
		assertThat(shard.name()).isEqualTo("shard1@10.0.0.1:7000");
		assertThat(shard.redacted())
			.isEqualTo("redis-cluster://10.0.0.1:7000,10.0.0.2:7000 [shard 1 of 3, slots 5461-10922,12000]");
	}

	@Test
	void aClusterVoterMaySayHowManyShardsItHasForAStartWithoutIt() {
		RedisNodeUri voter = RedisNodeUri.parse("redis-cluster://:s3cret@10.0.0.1:7000,10.0.0.2:7000/0?shards=3");
		assertThat(voter.cluster().declaredShards()).isEqualTo(3);
		assertThat(voter.redacted()).isEqualTo("redis-cluster://10.0.0.1:7000,10.0.0.2:7000?shards=3");
		assertThat(RedisNodeUri.parse("redis-cluster://10.0.0.1:7000").cluster().declaredShards()).isZero();
		RedisNodeUri provisional = voter.inShard(new HostAndPort("10.0.0.1", 7000),
				voter.cluster().provisionalShard(2, 3, List.of(new ClusterSlots.SlotRange(10922, 16383))));
		assertThat(provisional.cluster().provisional()).isTrue();
		assertThat(provisional.redacted()).as("the slots it stands for are not yet its cluster's")
			.isEqualTo("redis-cluster://10.0.0.1:7000,10.0.0.2:7000?shards=3 [shard 2 of 3]");
	}

	@ParameterizedTest
	@ValueSource(strings = { "redis-cluster://", "redis-cluster://u:s3cret@h:1/2", "redis-cluster://u:s3cret@h:1?x=1",
			"redis-cluster://u:s3cret@h:1#m", "redis-cluster://u:s3cret@h:1,,h:2", "redis-cluster://u:s3cret@h:1,h:1",
			"redis-cluster://u:s3cret@h:99999", "rediss-cluster://u:s3cret@bad host:1",
			"redis-cluster://u:s3cret@h:1?shards=0", "redis-cluster://u:s3cret@h:1?shards=16385",
			"redis-cluster://u:s3cret@h:1?shards=three", "redis-cluster://u:s3cret@h:1?shards=3&x=1",
			"redis-cluster://u:s3cret@h:1/1?shards=3" })
	void rejectsMalformedClusterUrisWithoutShowingThePassword(String text) {
		assertThatIllegalArgumentException().isThrownBy(() -> RedisNodeUri.parse(text))
			.satisfies((ex) -> assertThat(ex.getMessage()).doesNotContain("s3cret"));
	}

	@Test
	void oneSeedInTwoClusterVotersIsRefused() {
		assertThatThrownBy(() -> RedisNodeUri.parseAll(List.of("redis-cluster://127.0.0.1:7000,127.0.0.1:7001",
				"redis://127.0.0.1:6379", "redis-cluster://localhost:7001")))
			.isInstanceOfSatisfying(InvalidRedlockConfigurationException.class,
					(ex) -> assertThat(ex.setting()).isEqualTo("nodes[2]"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "redis://user:s3cret@bad host:1", "redis://:s3cret@h:1/db", "http://u:s3cret@h:1",
			"redis://u:s3cret@h:1?x=1", "redis://u:s3cret@:1", "redis://:ab/s3cret@h:x", "redis://:p@s3cret@h:x",
			"redis://u:s3cret@h:1/s3cret@db" })
	void errorsNeverShowThePassword(String text) {
		assertThatIllegalArgumentException().isThrownBy(() -> RedisNodeUri.parse(text))
			.satisfies((ex) -> assertThat(ex.getMessage()).doesNotContain("s3cret").contains("****"));
	}

	@Test
	void parsesASentinelVoterWithSeveralSentinelsTheMastersCredentialsAndDatabase() {
		RedisNodeUri uri = RedisNodeUri.parse("redis-sentinel://app:s3cret@10.0.0.1:26380,[::1],s3.example/2#orders");
		assertThat(uri.sentinel()).isNotNull();
		assertThat(uri.sentinel().masterName()).isEqualTo("orders");
		assertThat(uri.sentinel().sentinels()).extracting(Object::toString)
			.containsExactly("10.0.0.1:26380", "::1:26379", "s3.example:26379");
		assertThat(uri.user()).isEqualTo("app");
		assertThat(uri.password()).isEqualTo("s3cret");
		assertThat(uri.database()).isEqualTo(2);
		assertThat(uri.tls()).isFalse();
		assertThat(uri.kind()).isEqualTo("sentinel");
		assertThat(uri.name()).isEqualTo("orders@10.0.0.1:26380");
		assertThat(uri.redacted()).isEqualTo("redis-sentinel://10.0.0.1:26380,[::1]:26379,s3.example:26379/2#orders")
			.isEqualTo(uri.toString());
	}

	@Test
	void namesTheMasterByTheQueryParameterTooAndTakesTlsFromTheScheme() {
		RedisNodeUri uri = RedisNodeUri.parse("rediss-sentinel://s1:5000?sentinelMasterId=payments");
		assertThat(uri.tls()).isTrue();
		assertThat(uri.sentinel().masterName()).isEqualTo("payments");
		assertThat(uri.redacted()).isEqualTo("rediss-sentinel://s1:5000#payments");
	}

	@Test
	void aSentinelVoterMayWaitForItsReplicasAndSaysSoInItsRedactedForm() {
		RedisNodeUri uri = RedisNodeUri.parse("redis-sentinel://u:pw@s1,s2/1?waitReplicas=2#orders");
		assertThat(uri.waitReplicas()).isEqualTo(2);
		assertThat(uri.sentinel().masterName()).isEqualTo("orders");
		assertThat(uri.redacted()).isEqualTo("redis-sentinel://s1:26379,s2:26379/1?waitReplicas=2#orders");
		assertThat(RedisNodeUri.parse(uri.redacted()).waitReplicas()).isEqualTo(2);
		RedisNodeUri both = RedisNodeUri.parse("redis-sentinel://s1?waitReplicas=1&sentinelMasterId=m");
		assertThat(both.waitReplicas()).isEqualTo(1);
		assertThat(both.sentinel().masterName()).isEqualTo("m");
		assertThat(RedisNodeUri.parse("redis-sentinel://s1#m").waitReplicas()).isZero();
		assertThat(RedisNodeUri.parse("redis://h:7000").waitReplicas()).isZero();
	}

	@ParameterizedTest
	@ValueSource(strings = { "redis-sentinel://:s3cret@s1?waitReplicas=0#m",
			"redis-sentinel://:s3cret@s1?waitReplicas=101#m", "redis-sentinel://:s3cret@s1?waitReplicas=two#m",
			"redis-sentinel://:s3cret@s1?waitReplicas=#m",
			"redis-sentinel://:s3cret@s1?waitReplicas=1&waitReplicas=2#m" })
	void aBadWaitReplicasIsRefusedNamingTheParameterWithoutThePassword(String text) {
		assertThatIllegalArgumentException().isThrownBy(() -> RedisNodeUri.parse(text))
			.satisfies((ex) -> assertThat(ex.getMessage()).doesNotContain("s3cret")
				.contains("****")
				.contains("waitReplicas"));
	}

	@Test
	void aStandaloneNodeIsNamedByItsAddress() {
		RedisNodeUri uri = RedisNodeUri.parse("redis://h:7000");
		assertThat(uri.sentinel()).isNull();
		assertThat(uri.kind()).isEqualTo("standalone");
		assertThat(uri.name()).isEqualTo("h:7000");
	}

	@ParameterizedTest
	@ValueSource(strings = { "redis-sentinel://:s3cret@s1:26379", "redis-sentinel://:s3cret@s1:26379#",
			"redis-sentinel://:s3cret@s1:26379,,s2#m", "redis-sentinel://:s3cret@s1:99999#m",
			"redis-sentinel://:s3cret@s1/x#m", "redis-sentinel://:s3cret@s1?other=1#m",
			"redis-sentinel://:s3cret@s1?sentinelMasterId=a#b" })
	void aSentinelVoterWithoutAMasterNameOrWithABadSentinelIsRefusedWithoutItsPassword(String text) {
		assertThatIllegalArgumentException().isThrownBy(() -> RedisNodeUri.parse(text))
			.satisfies((ex) -> assertThat(ex.getMessage()).doesNotContain("s3cret").contains("****"));
	}

	@Test
	void aSentinelVotersPasswordIsTakenWholeUpToTheLastAtSignAndPercentDecoded() {
		RedisNodeUri raw = RedisNodeUri.parse("redis-sentinel://app:p#a,s/1?@s1:26379#orders");
		assertThat(raw.password()).isEqualTo("p#a,s/1?");
		assertThat(raw.sentinel().masterName()).isEqualTo("orders");
		assertThat(raw.redacted()).isEqualTo("redis-sentinel://s1:26379#orders");
		RedisNodeUri encoded = RedisNodeUri.parse("redis-sentinel://app:p%40ss%2B+%C3%A9@s1#orders");
		assertThat(encoded.password()).isEqualTo("p@ss++\u00e9");
		assertThat(encoded.user()).isEqualTo("app");
	}

	@ParameterizedTest
	@ValueSource(strings = { "redis-sentinel://app:s3cret%zz@s1#m", "redis-sentinel://app:s3cret%4@s1#m",
			"redis-sentinel://app:s3cret@s1:26379,s1:26379#m" })
	void aMalformedEncodingOrASentinelListedTwiceIsRefusedWithoutThePassword(String text) {
		assertThatIllegalArgumentException().isThrownBy(() -> RedisNodeUri.parse(text))
			.satisfies((ex) -> assertThat(ex.getMessage()).doesNotContain("s3cret"));
	}

	@Test
	void oneVoterNamingOneSentinelByTwoAliasesIsNotTakenForTwoVoters() {
		assertThat(RedisNodeUri.parseAll(
				List.of("redis-sentinel://localhost:26379,127.0.0.1:26379#orders", "redis://x:6379", "redis://y:6379")))
			.hasSize(3);
	}

	@Test
	void twoSentinelVotersSharingASentinelAndTheMastersNameAreOneMaster() {
		assertThatThrownByConfiguration(List.of("redis-sentinel://s1:26379,s2:26379#orders",
				"redis-sentinel://s3:26379,s2:26379#orders", "redis://x:6379"))
			.contains("nodes[1]", "same server as nodes[0]");
		assertThat(RedisNodeUri.parseAll(
				List.of("redis-sentinel://s1:26379#orders", "redis-sentinel://s1:26379#payments", "redis://x:6379")))
			.hasSize(3);
	}

	private static org.assertj.core.api.AbstractStringAssert<?> assertThatThrownByConfiguration(List<String> texts) {
		try {
			RedisNodeUri.parseAll(texts);
		}
		catch (InvalidRedlockConfigurationException ex) {
			return assertThat(ex.getMessage());
		}
		throw new AssertionError("accepted " + texts);
	}

}
