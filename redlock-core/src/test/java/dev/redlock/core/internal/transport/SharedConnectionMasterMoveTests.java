package dev.redlock.core.internal.transport;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.protocol.LockCommands;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.exceptions.JedisException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A voter's master moves (a Sentinel failover) and the shared connection is asked to
 * write before the move's hook has broken off its connection to the former master, which
 * may still take writes until the sentinels demote it: the call goes to the new master.
 * The hook, coming after, keeps the connection to the new master. Two real servers stand
 * for the former and the new master; the move is the generation the connections are
 * checked against, as {@link MasterAddress} advances it before it runs the hook.
 */
@WithRedisNodes(count = 2)
class SharedConnectionMasterMoveTests {

	private final AtomicReference<HostAndPort> master = new AtomicReference<>();

	private final AtomicInteger generation = new AtomicInteger();

	private final AtomicInteger opened = new AtomicInteger();

	private @Nullable SharedConnection shared;

	@AfterEach
	void close() {
		if (this.shared != null) {
			this.shared.close();
		}
	}

	@Test
	void aCallAfterTheMoveGoesToTheNewMasterBeforeTheMovesHookRan(RedisNodes nodes) throws Exception {
		RedisNode former = nodes.node(0);
		RedisNode promoted = nodes.node(1);
		this.master.set(address(former));
		SharedConnection shared = sharedConnection(former);

		assertThat(call(shared, "SET", "redlock:moved", "before")).isEqualTo("OK");
		assertThat(former.command("GET", "redlock:moved")).isEqualTo("before");

		// the move as MasterAddress makes it: the new master known first, the hook later
		this.master.set(address(promoted));
		this.generation.incrementAndGet();
		assertThat(call(shared, "SET", "redlock:moved", "after")).isEqualTo("OK");
		assertThat(promoted.command("GET", "redlock:moved")).as("written to the new master").isEqualTo("after");
		assertThat(former.command("GET", "redlock:moved")).as("not written to the former master").isEqualTo("before");

		shared.masterMoved();
		assertThat(call(shared, "SET", "redlock:moved", "kept")).isEqualTo("OK");
		assertThat(promoted.command("GET", "redlock:moved")).isEqualTo("kept");
		assertThat(this.opened).as("the connection to the new master kept through the hook").hasValue(2);
	}

	private SharedConnection sharedConnection(RedisNode node) {
		SharedConnection shared = new SharedConnection(RedisNodeUri.parse(node.uri()), this::open,
				(connection) -> connection.masterGeneration == this.generation.get(), TimeUnit.SECONDS.toNanos(20),
				10_000, true);
		this.shared = shared;
		return shared;
	}

	/** Opens a connection to the master as it is now, tagged with its generation. */
	private CompletableFuture<PipelinedConnection> open(int timeoutMillis) {
		int openedFor = this.generation.get();
		HostAndPort address = this.master.get();
		return CompletableFuture.supplyAsync(() -> {
			PipelinedConnection connection = new PipelinedConnection(address,
					DefaultJedisClientConfig.builder().timeoutMillis(timeoutMillis).build());
			connection.greeted(LockCommands.SCRIPTS, new NodeCommands(address.toString()));
			connection.masterGeneration = openedFor;
			this.opened.incrementAndGet();
			return connection;
		});
	}

	/** Submits a command as one call and waits for its reply, rendered as text. */
	private static String call(SharedConnection shared, String... args) throws Exception {
		CompletableFuture<String> reply = new CompletableFuture<>();
		CommandArguments command = new CommandArguments(Command.valueOf(args[0]));
		for (int i = 1; i < args.length; i++) {
			command.add(args[i]);
		}
		long writeBy = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		shared.submit(new SharedConnection.Call() {

			@Override
			public void writeTo(int node, PipelinedConnection connection) {
				connection.send(command);
			}

			@Override
			public void readFrom(int node, PipelinedConnection connection) {
				Object read = connection.readReply();
				reply.complete((read instanceof byte[] bytes) ? new String(bytes) : String.valueOf(read));
			}

			@Override
			public void failed(int node, JedisException failure, boolean written) {
				reply.completeExceptionally(failure);
			}

			@Override
			public long writeBy() {
				return writeBy;
			}

		}, 0);
		return reply.get(30, TimeUnit.SECONDS);
	}

	private static HostAndPort address(RedisNode node) {
		return new HostAndPort(node.host(), node.port());
	}

}
