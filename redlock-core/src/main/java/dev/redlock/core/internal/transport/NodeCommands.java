package dev.redlock.core.internal.transport;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.internal.protocol.LockCommands;

/**
 * What one node runs the lock's compare-and-delete and compare-and-extend with, as its
 * connections' greetings found ({@link LockCommands}), and whether it refuses scripts.
 * Each connection keeps what its own greeting found (the server may change under a
 * rolling upgrade); once the node refuses a native command all the same (an ACL, a proxy
 * that does not know it), every connection to it runs scripts, and that is logged once.
 */
public final class NodeCommands {

	private static final Logger logger = LoggerFactory.getLogger(NodeCommands.class);

	private final String node;

	private volatile LockCommands found = LockCommands.SCRIPTS;

	private volatile @Nullable String scriptsRefused;

	private volatile boolean nativeRefused;

	NodeCommands(String node) {
		this.node = node;
	}

	/** Told what a new connection's greeting found. */
	void greeted(LockCommands commands, @Nullable String scriptLoadRefusal) {
		this.found = commands;
		this.scriptsRefused = scriptLoadRefusal;
	}

	/**
	 * What a connection whose greeting found {@code greeted} runs now: scripts once the
	 * node refused a native command.
	 */
	LockCommands effective(LockCommands greeted) {
		return this.nativeRefused ? LockCommands.SCRIPTS : greeted;
	}

	/** The node refused a native command: scripts from now on, on every connection. */
	void refusedNative(String reply) {
		if (!this.nativeRefused) {
			this.nativeRefused = true;
			logger.warn("{} refused a native lock command ({}); it runs the lock scripts from now on (grant the user "
					+ "+delex on Redis, +delifeq on Valkey, to use it)", this.node, reply);
		}
	}

	/**
	 * What the node's latest greeting found, scripts once it refused a native command.
	 */
	public LockCommands current() {
		return effective(this.found);
	}

	/**
	 * How the node refused to load the lock scripts at its latest greeting when it did
	 * because of the user's permissions ({@code NOPERM}), else {@code null}.
	 */
	public @Nullable String scriptsRefused() {
		return this.scriptsRefused;
	}

}
