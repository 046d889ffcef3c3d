package dev.redlock.core;

import redis.clients.jedis.exceptions.JedisConnectionException;

/**
 * A node refused a new connection's credentials or handshake ({@code WRONGPASS},
 * {@code NOAUTH}, {@code NOPERM}): a configuration fault of that node's URI, to be
 * reported as such rather than as a node that is down or refuses a command. Its message
 * is the node's error text, which never contains the password.
 */
final class AuthenticationFailedException extends JedisConnectionException {

	private static final long serialVersionUID = 1L;

	AuthenticationFailedException(String message, Throwable cause) {
		super(message, cause);
	}

}
