package dev.redlock.core.internal.quarantine;

import org.slf4j.Logger;

import dev.redlock.core.QuarantineReason;
import dev.redlock.core.internal.transport.RedisNodeUri;

/**
 * What a detector may do to the node it watches: quarantine it, with a reason and until
 * when. Implemented by {@link NodeQuarantine}, which owns the detectors.
 */
interface Quarantining {

	/**
	 * Keeps the node from counting until the given time, unless it already is until
	 * later.
	 * @param cause why it may have forgotten locks
	 * @param untilNanos {@link System#nanoTime()} from when it counts again
	 * @param detail what was seen, for the log
	 */
	void quarantine(QuarantineReason cause, long untilNanos, String detail);

	/** Whether quarantines are on at all (a restart quarantine above zero). */
	boolean isOn();

	/** The restart quarantine, in nanoseconds: how long a cause keeps a node out. */
	long quarantineNanos();

	/** The node, for logs. */
	RedisNodeUri node();

	/** The key of the node's marker. */
	String markerKey();

	/** Where the detectors tell what they find. */
	Logger logger();

}
