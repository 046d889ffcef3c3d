package dev.redlock.core.internal.transport;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.util.RedisOutputStream;

/**
 * The commands of many callers of a shared connection, written to its socket in batches:
 * each caller encodes its commands into the batch being filled (a copy in memory, under
 * the connection's write lock), and the connection's writer thread takes the whole batch
 * and writes it with one call while the callers go on filling the next one. A node thus
 * reads many callers' commands at once, and no caller waits for a socket write.
 */
final class WriteBatches {

	private final OutputStream socket;

	/** The batch being filled: touched only under the caller's write lock. */
	private Batch filling = new Batch();

	/** The other batch: being written, or empty. */
	private Batch spare = new Batch();

	private final RedisOutputStream encoder = new RedisOutputStream(new OutputStream() {

		@Override
		public void write(int b) {
			WriteBatches.this.filling.append((byte) b);
		}

		@Override
		public void write(byte[] bytes, int offset, int length) {
			WriteBatches.this.filling.append(bytes, offset, length);
		}

	}, 8192);

	/** Whether the batch being filled holds commands still to write. */
	private volatile boolean filled;

	WriteBatches(OutputStream socket) {
		this.socket = socket;
	}

	/**
	 * Encodes a command into the batch being filled; the caller holds the write lock and
	 * ends with {@link #commandsEnded()}.
	 */
	void encode(CommandArguments command) {
		Protocol.sendCommand(this.encoder, command);
	}

	/** The caller's commands are all encoded; it still holds the write lock. */
	void commandsEnded() {
		try {
			this.encoder.flush();
		}
		catch (IOException ex) {
			// writes to memory: nothing to fail
			throw new IllegalStateException(ex);
		}
		this.filled = true;
	}

	/** Whether the batch being filled holds commands still to write. */
	boolean isFilled() {
		return this.filled;
	}

	/**
	 * Writes what is batched: on the writer thread, the only one that writes, without the
	 * write lock.
	 * @param writeLock the lock under which callers encode
	 * @throws IOException if the socket write failed: the connection is broken
	 */
	void writeOut(Object writeLock) throws IOException {
		Batch batch;
		synchronized (writeLock) {
			batch = this.filling;
			this.filling = this.spare;
			this.spare = batch;
			this.filled = false;
		}
		if (batch.count > 0) {
			this.socket.write(batch.bytes, 0, batch.count);
			this.socket.flush();
		}
		batch.count = 0;
	}

	/** Bytes to write, in a buffer that grows as needed and is reused. */
	private static final class Batch {

		private byte[] bytes = new byte[8192];

		private int count;

		void append(byte[] source, int offset, int length) {
			room(length);
			System.arraycopy(source, offset, this.bytes, this.count, length);
			this.count += length;
		}

		void append(byte b) {
			room(1);
			this.bytes[this.count++] = b;
		}

		private void room(int length) {
			if (this.count + length > this.bytes.length) {
				this.bytes = Arrays.copyOf(this.bytes, Math.max(this.bytes.length * 2, this.count + length));
			}
		}

	}

}
