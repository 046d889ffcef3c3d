package dev.redlock.core.internal.transport;

import redis.clients.jedis.exceptions.JedisConnectionException;

/**
 * Every sentinel of a voter that answered knows no master of the configured name: a
 * configuration error (a misspelt name, the wrong sentinels), not a voter that is down.
 */
public final class SentinelMasterUnknownException extends JedisConnectionException {

	private static final long serialVersionUID = 1L;

	SentinelMasterUnknownException(String message) {
		super(message);
	}

}
