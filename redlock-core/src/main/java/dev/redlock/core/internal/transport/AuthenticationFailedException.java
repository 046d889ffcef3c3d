package dev.redlock.core.internal.transport;

import redis.clients.jedis.exceptions.JedisConnectionException;

/**
 * A node refused a new connection's credentials or handshake ({@code WRONGPASS},
 * {@code NOAUTH}, {@code NOPERM}): a configuration fault of that node's URI, to be
 * reported as such rather than as a node that is down or refuses a command. Its message
 * is the node's error text, which never contains the password. It has no stack trace of
 * its own: its cause, the node's refusal, has the handshake's, and one is made again on
 * every round while the node is left alone after it (see {@link NodeLeftOutException}).
 */
public final class AuthenticationFailedException extends JedisConnectionException {

	private static final long serialVersionUID = 1L;

	AuthenticationFailedException(String message, Throwable cause) {
		super(message, cause);
	}

	@Override
	public synchronized Throwable fillInStackTrace() {
		return this;
	}

}
