package dev.redlock.test;

/** A node the kit owns: it can be stopped for good. */
interface ManagedNode extends RedisNode {

	/**
	 * Stops the server for good (graceful first, forcibly after about 2 s, resuming a
	 * paused one first) and frees its resources. Idempotent, never throws.
	 */
	void stop();

}
