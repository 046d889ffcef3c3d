package dev.redlock.core.internal.transport;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.protocol.NativeCall;
import redis.clients.jedis.args.Rawable;

/**
 * The calls a connection sent in their native form whose replies are still owed, in the
 * order sent, with a place for each plain command sent between them, so that each reply
 * is read as what was sent. Empty while no native call is owed, which costs a plain
 * command nothing; the arrays are reused.
 */
final class PendingCalls {

	private @Nullable NativeCall[] calls = new NativeCall[8];

	private @Nullable Rawable[] values = new Rawable[8];

	private int head;

	private int size;

	boolean isEmpty() {
		return this.size == 0;
	}

	/**
	 * Records a command sent.
	 * @param call its native form, {@code null} for a plain command
	 * @param value the native call's value
	 */
	void add(@Nullable NativeCall call, @Nullable Rawable value) {
		if (this.size == this.calls.length) {
			grow();
		}
		int tail = (this.head + this.size) % this.calls.length;
		this.calls[tail] = call;
		this.values[tail] = value;
		this.size++;
	}

	/** The oldest owed command's native form, {@code null} for a plain command. */
	@Nullable NativeCall oldest() {
		return this.calls[this.head];
	}

	/** The oldest owed native call's value. */
	@Nullable Rawable oldestValue() {
		return this.values[this.head];
	}

	/** The oldest owed command's reply was read. */
	void removeOldest() {
		this.calls[this.head] = null;
		this.values[this.head] = null;
		this.head = (this.head + 1) % this.calls.length;
		this.size--;
	}

	private void grow() {
		@Nullable NativeCall[] calls = new NativeCall[this.calls.length * 2];
		@Nullable Rawable[] values = new Rawable[calls.length];
		for (int i = 0; i < this.size; i++) {
			calls[i] = this.calls[(this.head + i) % this.calls.length];
			values[i] = this.values[(this.head + i) % this.values.length];
		}
		this.calls = calls;
		this.values = values;
		this.head = 0;
	}

}
