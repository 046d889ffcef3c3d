package dev.redlock.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.redlock.core.Redlock;
import dev.redlock.test.RedisCluster;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The startup check of the nodes: a server listed twice under different addresses, a
 * replica and a Redis Cluster node fail startup naming the node's property; an
 * unreachable node, an even count and an evicting memory policy are warnings.
 */
@WithRedisNodes(count = 3)
@ExtendWith(OutputCaptureExtension.class)
class StartupVerificationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RedlockAutoConfiguration.class))
		.withPropertyValues("redlock.restart-quarantine=0s");

	@Test
	void healthyNodesStartWithoutWarnings(RedisNodes nodes, CapturedOutput output) {
		this.runner.withPropertyValues(nodes(nodes.uris())).run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(Redlock.class);
			assertThat(context.getBean(Redlock.class).verifyNodes()).isEmpty();
		});
		assertThat(output).doesNotContain("Redlock configuration, property");
	}

	@Test
	void theSameServerBehindASecondAddressFailsNamingBothNodes(RedisNodes nodes) throws IOException {
		try (Forwarder alias = new Forwarder(nodes.node(0).port())) {
			List<String> uris = List.of(nodes.node(0).uri(), nodes.node(1).uri(), "redis://127.0.0.1:" + alias.port());
			this.runner.withPropertyValues(nodes(uris)).run((context) -> {
				assertThat(context).hasFailed();
				InvalidRedlockPropertyException ex = findCause(context.getStartupFailure());
				assertThat(ex.property()).isEqualTo("redlock.nodes[2]");
				assertThat(ex.reason()).contains("same Redis server as nodes[0]", nodes.node(0).uri(),
						"127.0.0.1:" + alias.port(), "run_id");
			});
		}
	}

	@Test
	void aReplicaFailsStartup(RedisNodes nodes) {
		nodes.node(2).command("REPLICAOF", "127.0.0.1", String.valueOf(nodes.node(0).port()));
		try {
			this.runner.withPropertyValues(nodes(nodes.uris())).run((context) -> {
				assertThat(context).hasFailed();
				InvalidRedlockPropertyException ex = findCause(context.getStartupFailure());
				assertThat(ex.property()).isEqualTo("redlock.nodes[2]");
				assertThat(ex.reason()).contains("slave", "not a master");
			});
		}
		finally {
			nodes.node(2).command("REPLICAOF", "NO", "ONE");
		}
	}

	@Test
	void aClusterNodeFailsStartup(RedisNodes nodes) {
		try (RedisCluster cluster = RedisCluster.start(3, 0)) {
			RedisNode shard = cluster.primaryOf(1);
			List<String> uris = List.of(nodes.node(0).uri(), shard.uri(), nodes.node(1).uri());
			this.runner.withPropertyValues(nodes(uris)).run((context) -> {
				assertThat(context).hasFailed();
				InvalidRedlockPropertyException ex = findCause(context.getStartupFailure());
				assertThat(ex.property()).isEqualTo("redlock.nodes[1]");
				assertThat(ex.reason()).contains(shard.uri(), "Redis Cluster node", "MOVED");
			});
		}
	}

	@Test
	void anUnreachableMinorityAnEvenCountAndAnEvictingPolicyAreOnlyWarnings(RedisNodes nodes, CapturedOutput output) {
		nodes.node(1).command("CONFIG", "SET", "maxmemory-policy", "volatile-lru");
		nodes.node(2).kill();
		try {
			List<String> uris = List.of(nodes.node(0).uri(), nodes.node(1).uri(), nodes.node(2).uri());
			this.runner.withPropertyValues(nodes(uris))
				.withPropertyValues("redlock.nodes[3]=redis://127.0.0.1:1")
				.run((context) -> assertThat(context).hasNotFailed());
			assertThat(output).contains("property 'redlock.nodes': 4 nodes")
				.contains("property 'redlock.nodes[1]'", "maxmemory-policy volatile-lru")
				.contains("property 'redlock.nodes[2]'", "cannot be checked now")
				.contains("property 'redlock.nodes[3]'");
		}
		finally {
			nodes.node(1).command("CONFIG", "SET", "maxmemory-policy", "noeviction");
		}
	}

	private static String[] nodes(List<String> uris) {
		String[] properties = new String[uris.size()];
		for (int i = 0; i < uris.size(); i++) {
			properties[i] = "redlock.nodes[" + i + "]=" + uris.get(i);
		}
		return properties;
	}

	private static InvalidRedlockPropertyException findCause(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof InvalidRedlockPropertyException invalid) {
				return invalid;
			}
		}
		throw new AssertionError("no InvalidRedlockPropertyException in " + failure, failure);
	}

	/** A second loopback port for the same Redis server: plain byte copying both ways. */
	private static final class Forwarder implements AutoCloseable {

		private final ServerSocket server;

		private final List<Socket> sockets = new ArrayList<>();

		Forwarder(int targetPort) throws IOException {
			this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
			Thread acceptor = new Thread(() -> {
				while (!this.server.isClosed()) {
					try {
						Socket client = this.server.accept();
						Socket target = new Socket(InetAddress.getLoopbackAddress(), targetPort);
						synchronized (this.sockets) {
							this.sockets.add(client);
							this.sockets.add(target);
						}
						pump(client.getInputStream(), target.getOutputStream());
						pump(target.getInputStream(), client.getOutputStream());
					}
					catch (IOException ex) {
						// closed
					}
				}
			}, "forwarder-" + targetPort);
			acceptor.setDaemon(true);
			acceptor.start();
		}

		int port() {
			return this.server.getLocalPort();
		}

		private static void pump(InputStream in, OutputStream out) {
			Thread thread = new Thread(() -> {
				try {
					in.transferTo(out);
				}
				catch (IOException ex) {
					// one side closed
				}
			});
			thread.setDaemon(true);
			thread.start();
		}

		@Override
		public void close() throws IOException {
			this.server.close();
			synchronized (this.sockets) {
				for (Socket socket : this.sockets) {
					socket.close();
				}
			}
		}

	}

}
