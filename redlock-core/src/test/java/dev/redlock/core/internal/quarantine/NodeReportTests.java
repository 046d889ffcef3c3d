package dev.redlock.core.internal.quarantine;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.protocol.InfoReply;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a node's {@code INFO replication} tells the trust in promotions: a master's own
 * replication id and replica count, nothing of a replica's (which reports its master's).
 */
class NodeReportTests {

	@Test
	void aMasterTellsItsReplicationIdAndItsConnectedReplicas() {
		var replication = InfoReply.parse(("# Replication\r\nrole:master\r\nconnected_slaves:2\r\n"
				+ "slave0:ip=127.0.0.1,port=7001,state=online,offset=14,lag=0\r\n" + "master_replid:" + "a".repeat(40)
				+ "\r\nmaster_replid2:" + "0".repeat(40) + "\r\n")
			.getBytes(StandardCharsets.UTF_8));
		assertThat(NodeReport.replicaCount(replication)).isEqualTo(2);
		assertThat(NodeReport.replicationId(replication)).isEqualTo("a".repeat(40));
		assertThat(NodeReport.promotedFrom(replication)).isNull();
	}

	@Test
	void aReplicaTellsNeitherItsMastersIdNorItsReplicas() {
		var replication = InfoReply.parse(("# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\n"
				+ "connected_slaves:0\r\nmaster_replid:" + "a".repeat(40) + "\r\n")
			.getBytes(StandardCharsets.UTF_8));
		assertThat(NodeReport.replicaCount(replication)).isEqualTo(-1);
		assertThat(NodeReport.replicationId(replication)).isNull();
	}

	@Test
	void aCountThatIsNotANumberIsUnknown() {
		var replication = InfoReply.parse("role:master\r\nconnected_slaves:many\r\n".getBytes(StandardCharsets.UTF_8));
		assertThat(NodeReport.replicaCount(replication)).isEqualTo(-1);
	}

}
