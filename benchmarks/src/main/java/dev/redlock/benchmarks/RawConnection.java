package dev.redlock.benchmarks;

import redis.clients.jedis.Connection;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;

/** A Jedis connection whose buffered command can be sent without reading the reply. */
final class RawConnection extends Connection {

	RawConnection(HostAndPort hostAndPort, JedisClientConfig config) {
		super(hostAndPort, config);
	}

	/** Writes out what {@link #sendCommand} buffered; reads nothing. */
	void flushNow() {
		flush();
	}

}
