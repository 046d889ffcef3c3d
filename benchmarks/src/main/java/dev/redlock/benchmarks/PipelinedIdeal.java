package dev.redlock.benchmarks;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.util.RedisInputStream;
import redis.clients.jedis.util.RedisOutputStream;

/**
 * What auto-pipelining could give, at the least cost: the {@link IdealRedlock ideal}
 * client's two rounds, but over ONE connection per node shared by every thread. Callers
 * queue their commands; a writer thread per node writes whatever is queued with one
 * flush, and a reader thread per node hands each reply, in order, to the round that sent
 * the command, whose caller waits until every node answered. No timeouts, no pool, no
 * early exit: not a usable client, but the measure of whether sharing connections pays on
 * this machine before anyone builds it into the round engine.
 */
@State(Scope.Benchmark)
public class PipelinedIdeal {

	private SharedNode[] nodes;

	private String releaseSha;

	/** {@link #round}, made once: a method reference per call would allocate. */
	private final Function<CommandArguments, Object[]> rounds = this::round;

	@Setup(Level.Trial)
	public void connect(RedisCluster cluster) throws IOException {
		this.nodes = new SharedNode[cluster.uris().size()];
		for (int i = 0; i < this.nodes.length; i++) {
			this.nodes[i] = new SharedNode(URI.create(cluster.uris().get(i)), i);
		}
		Object[] loaded = round(new CommandArguments(Command.SCRIPT).add("LOAD").add(NaiveRedlock.RELEASE));
		this.releaseSha = new String((byte[]) loaded[0], StandardCharsets.US_ASCII);
	}

	@TearDown(Level.Trial)
	public void close() throws IOException {
		for (SharedNode node : this.nodes) {
			if (node != null) {
				node.close();
			}
		}
	}

	/**
	 * Locks on every node and unlocks.
	 * @param key a fresh key
	 * @param ttlMillis the lock's TTL
	 * @return whether a majority granted the lock
	 */
	public boolean lockUnlock(String key, long ttlMillis) {
		return IdealRedlock.lockUnlock(this.rounds, this.releaseSha, key, ttlMillis);
	}

	/** Queues the command for every node, then waits for every reply. */
	private Object[] round(CommandArguments command) {
		Round round = new Round(this.nodes.length, Thread.currentThread());
		for (SharedNode node : this.nodes) {
			node.submit(new Pending(command, round));
		}
		round.await();
		return round.replies;
	}

	/** The replies of one round, and its caller, woken by the last one. */
	private static final class Round {

		final Object[] replies;

		private final AtomicInteger missing;

		private final Thread caller;

		Round(int nodes, Thread caller) {
			this.replies = new Object[nodes];
			this.missing = new AtomicInteger(nodes);
			this.caller = caller;
		}

		void complete(int node, Object reply) {
			this.replies[node] = reply;
			if (this.missing.decrementAndGet() == 0) {
				LockSupport.unpark(this.caller);
			}
		}

		/**
		 * Waits for every reply, at most 2 s like the other clients' socket timeout: a
		 * node that failed (its writer or reader thread ended) ends the benchmark rather
		 * than hanging it.
		 */
		void await() {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
			while (this.missing.get() > 0) {
				long left = deadline - System.nanoTime();
				if (left <= 0 || Thread.interrupted()) {
					throw new IllegalStateException(this.missing.get() + " nodes did not answer within 2 s");
				}
				LockSupport.parkNanos(this, left);
			}
		}

	}

	private record Pending(CommandArguments command, Round round) {
	}

	/**
	 * One connection to a node, shared: a writer thread writes what callers queued, one
	 * flush per batch, and a reader thread completes the commands in the order written.
	 */
	private static final class SharedNode {

		private final int index;

		private final Socket socket;

		private final RedisOutputStream out;

		private final RedisInputStream in;

		private final Queue<Pending> queued = new ConcurrentLinkedQueue<>();

		/** Written, reply not read yet: in the order written, which is the replies'. */
		private final Queue<Pending> written = new ConcurrentLinkedQueue<>();

		private final AtomicBoolean writerAsleep = new AtomicBoolean();

		private final Thread writer;

		private final Thread reader;

		private volatile boolean open = true;

		SharedNode(URI uri, int index) throws IOException {
			this.index = index;
			this.socket = new Socket();
			this.socket.setTcpNoDelay(true);
			this.socket.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 2_000);
			this.out = new RedisOutputStream(this.socket.getOutputStream(), 64 * 1024);
			this.in = new RedisInputStream(this.socket.getInputStream(), 64 * 1024);
			this.writer = daemon("pipelined-writer-" + index, this::write);
			this.reader = daemon("pipelined-reader-" + index, this::read);
		}

		private static Thread daemon(String name, Runnable work) {
			Thread thread = new Thread(work, name);
			thread.setDaemon(true);
			thread.start();
			return thread;
		}

		void submit(Pending pending) {
			this.queued.add(pending);
			if (this.writerAsleep.compareAndSet(true, false)) {
				LockSupport.unpark(this.writer);
			}
		}

		private void write() {
			try {
				while (this.open) {
					Pending next = this.queued.poll();
					if (next != null) {
						this.written.add(next);
						Protocol.sendCommand(this.out, next.command());
						continue;
					}
					this.out.flush();
					this.writerAsleep.set(true);
					if (this.queued.isEmpty()) {
						LockSupport.park(this);
					}
					this.writerAsleep.set(false);
				}
			}
			catch (IOException | RuntimeException ex) {
				if (this.open) {
					throw new IllegalStateException("writing to node " + this.index + " failed", ex);
				}
			}
		}

		private void read() {
			try {
				while (this.open) {
					Object reply;
					try {
						reply = Protocol.read(this.in);
					}
					catch (JedisDataException ex) {
						reply = ex;
					}
					Pending pending = this.written.poll();
					pending.round().complete(this.index, reply);
				}
			}
			catch (RuntimeException ex) {
				if (this.open) {
					throw new IllegalStateException("reading from node " + this.index + " failed", ex);
				}
			}
		}

		void close() throws IOException {
			this.open = false;
			LockSupport.unpark(this.writer);
			this.socket.close();
		}

	}

}
