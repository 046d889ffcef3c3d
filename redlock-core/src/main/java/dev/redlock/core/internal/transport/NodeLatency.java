package dev.redlock.core.internal.transport;

/**
 * How long one node takes to answer, from the moment a command is written until its reply
 * is read, as the rounds and new connections measure it: what a round reads to decide
 * which node it waits for first and which it may leave out as slow.
 */
public final class NodeLatency {

	/**
	 * A moving average, first taken from the greeting of each new connection, so that a
	 * node is measured even when rounds stop waiting for it.
	 */
	private volatile long expectedNanos;

	/**
	 * The lowest time measured, drifting up by a 256th of the difference with each slower
	 * one. Waiting for a busy client's CPU only ever adds to a measurement, so this tells
	 * how far away the node is even when {@link #expectedNanos} mostly says how busy the
	 * client was.
	 */
	private volatile long quickestNanos;

	/**
	 * Notes how long the node took to answer a command, timeouts included.
	 * @param nanos from the moment the command was written until its reply was read (or
	 * the read gave up)
	 * @param foundWaiting whether the reply was already there when the read began: it may
	 * have come long before (while a round waited for another node), so the time says
	 * only that the node answered within it, which may lower the estimate but never
	 * raises it
	 */
	public void replied(long nanos, boolean foundWaiting) {
		if (foundWaiting && nanos - this.expectedNanos >= 0) {
			return;
		}
		long average = this.expectedNanos;
		this.expectedNanos = (average == 0) ? Math.max(1, nanos) : Math.max(1, (average + nanos) / 2);
		long quickest = this.quickestNanos;
		this.quickestNanos = (quickest == 0 || nanos < quickest) ? Math.max(1, nanos)
				: quickest + (nanos - quickest) / 256;
	}

	/**
	 * Returns how long the node is expected to take to answer a command.
	 * @return nanoseconds from writing the command to reading its reply; 0 before any was
	 * measured
	 */
	public long expectedNanos() {
		return this.expectedNanos;
	}

	/**
	 * Returns how long the node's quickest recent answers took.
	 * @return nanoseconds from writing a command to reading its reply; 0 before any was
	 * measured
	 */
	public long quickestNanos() {
		return this.quickestNanos;
	}

}
