package dev.redlock.core;

import redis.clients.jedis.Connection;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;

/**
 * A Jedis connection whose buffered commands can be flushed without waiting for the reply, so that a command can be
 * written to every node before any reply is read.
 */
final class PipelinedConnection extends Connection {

	PipelinedConnection(HostAndPort hostAndPort, JedisClientConfig config) {
		super(hostAndPort, config);
	}

	/** Sends what {@link #sendCommand} buffered, without reading. */
	void flushNow() {
		flush();
	}

}
