package dev.redlock.core.internal.transport;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.protocol.NativeCall;
import redis.clients.jedis.args.Rawable;

/**
 * The replies a connection owes, and which of them answer calls sent in their native
 * form, in the order sent, so that each reply is read as what was sent. While no native
 * call is owed nothing is recorded but the count, which costs a plain command nothing;
 * once one is, every owed reply has a place (a plain command's is empty). The arrays are
 * reused. Safe for one thread sending while another reads, as on a
 * {@link SharedConnection}.
 */
final class PendingCalls {

	private @Nullable NativeCall[] calls = new NativeCall[8];

	private @Nullable Rawable[] values = new Rawable[8];

	private int head;

	/** How many owed replies have a place: none, or every owed one. */
	private int size;

	private int owed;

	/** How many replies are owed. */
	synchronized int owed() {
		return this.owed;
	}

	/** A plain command was sent. */
	synchronized void sentPlain() {
		if (this.size > 0) {
			add(null, null);
		}
		this.owed++;
	}

	/**
	 * A call was sent in its native form.
	 * @param call its native form
	 * @param value the call's value
	 */
	synchronized void sentNative(NativeCall call, Rawable value) {
		// the plain replies owed before it get their places, else the first of them
		// would be read as this call's
		for (int i = this.size; i < this.owed; i++) {
			add(null, null);
		}
		add(call, value);
		this.owed++;
	}

	private void add(@Nullable NativeCall call, @Nullable Rawable value) {
		if (this.size == this.calls.length) {
			grow();
		}
		int tail = (this.head + this.size) % this.calls.length;
		this.calls[tail] = call;
		this.values[tail] = value;
		this.size++;
	}

	/**
	 * The oldest owed reply's native call, {@code null} for a plain command's.
	 */
	synchronized @Nullable NativeCall oldest() {
		return (this.size > 0) ? this.calls[this.head] : null;
	}

	/** The oldest owed native call's value. */
	synchronized @Nullable Rawable oldestValue() {
		return (this.size > 0) ? this.values[this.head] : null;
	}

	/** The oldest owed reply was read. */
	synchronized void replyRead() {
		this.owed--;
		if (this.size > 0) {
			this.calls[this.head] = null;
			this.values[this.head] = null;
			this.head = (this.head + 1) % this.calls.length;
			this.size--;
		}
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
