package dev.redlock.core.internal.transport;

import java.net.SocketTimeoutException;

import redis.clients.jedis.exceptions.JedisConnectionException;

/**
 * Why a round left a node out without trying it: the node is slow and its connections are
 * busy, it is being connected in the background, or it is in its back-off after a failed
 * connection attempt. One is made for that node on every round while it lasts, so it has
 * no stack trace: where it was made tells nothing its message does not, and filling one
 * in cost more than the rest of the round's work for that node. The failure behind a
 * back-off is its cause, with the stack of the attempt that failed.
 */
public final class NodeLeftOutException extends JedisConnectionException {

	private static final long serialVersionUID = 1L;

	/**
	 * A node left out after a failed connection attempt.
	 * @param message what is reported, never a password
	 * @param cause the failed attempt
	 */
	NodeLeftOutException(String message, Throwable cause) {
		super(message, cause);
	}

	/**
	 * A node left out as too slow for this round: reported as a timeout.
	 * @param why what is reported
	 * @return the failure to report for the node
	 */
	public static NodeLeftOutException asTimedOut(String why) {
		return new NodeLeftOutException(why, new LeftOutTimeout());
	}

	@Override
	public synchronized Throwable fillInStackTrace() {
		return this;
	}

	/** What makes the node's reply count as a timeout, with no stack trace either. */
	private static final class LeftOutTimeout extends SocketTimeoutException {

		private static final long serialVersionUID = 1L;

		@Override
		public synchronized Throwable fillInStackTrace() {
			return this;
		}

	}

}
