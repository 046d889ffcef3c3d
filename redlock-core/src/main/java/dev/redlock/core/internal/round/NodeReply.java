package dev.redlock.core.internal.round;

import java.net.SocketTimeoutException;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.transport.AuthenticationFailedException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.exceptions.JedisRedirectionException;

/**
 * What one node answered in one round. A round makes one per node, so it is kept to three
 * fields (24 bytes): the reply and the failure share one, the node, kind and flags
 * another, and the time is kept in microseconds.
 */
public final class NodeReply {

	private static final Kind[] KINDS = Kind.values();

	private static final int WRITTEN = 1;

	private static final int FOLLOWED_UP = 2;

	private static final int KIND_SHIFT = 2;

	private static final int NODE_SHIFT = 8;

	/**
	 * The node's index, from bit {@value #NODE_SHIFT} on; the kind's ordinal, from bit
	 * {@value #KIND_SHIFT}; and the flags {@link #WRITTEN} and {@link #FOLLOWED_UP}.
	 */
	private final int nodeKindAndFlags;

	/** Time until the reply was read or the node gave up, in microseconds. */
	private final int micros;

	/** The reply when {@link Kind#REPLIED}, else the failure. */
	private final @Nullable Object payload;

	/**
	 * Creates one.
	 * @param node index of the node in the {@code Redlock}'s node list
	 * @param kind how the round trip ended
	 * @param payload the reply when {@code kind} is {@link Kind#REPLIED}, else the
	 * failure
	 * @param nanos time from the start of the round until this reply was read or the node
	 * gave up
	 * @param written whether the command was written to the node
	 * @param followedUp whether the round's follow-up was written right behind it
	 */
	private NodeReply(int node, Kind kind, @Nullable Object payload, long nanos, boolean written, boolean followedUp) {
		this.nodeKindAndFlags = (node << NODE_SHIFT) | (kind.ordinal() << KIND_SHIFT) | (written ? WRITTEN : 0)
				| (followedUp ? FOLLOWED_UP : 0);
		this.micros = (int) Math.min(Integer.MAX_VALUE, Math.max(0, nanos / 1_000));
		this.payload = payload;
	}

	/** Index of the node in the {@code Redlock}'s node list. */
	public int node() {
		return this.nodeKindAndFlags >>> NODE_SHIFT;
	}

	/** How the round trip ended. */
	public Kind kind() {
		return KINDS[(this.nodeKindAndFlags >>> KIND_SHIFT) & 0x3F];
	}

	/**
	 * The reply when {@link #kind()} is {@link Kind#REPLIED}: {@code byte[]} status or
	 * bulk, {@code Long}, a list, or {@code null} for a nil reply; {@code null}
	 * otherwise.
	 */
	public @Nullable Object value() {
		if (kind() != Kind.REPLIED) {
			return null;
		}
		return (this.payload instanceof ReplicatedReply replicated) ? replicated.value() : this.payload;
	}

	/**
	 * How long the reply waited, once the node's calls had answered, for replicas to
	 * acknowledge them ({@code WAIT}), to the nanosecond; 0 for a reply that waited for
	 * none. A clock the calls read was read that long before the reply.
	 */
	public long waitedNanos() {
		return (this.payload instanceof ReplicatedReply replicated) ? replicated.waitedNanos() : 0;
	}

	/** The failure, when {@link #kind()} is not {@link Kind#REPLIED}. */
	public @Nullable Exception error() {
		return (kind() == Kind.REPLIED) ? null : (Exception) this.payload;
	}

	/**
	 * Time from the start of the round until this reply was read or the node gave up, to
	 * the microsecond.
	 */
	public long nanos() {
		return this.micros * 1_000L;
	}

	/**
	 * Whether the command was written to the node, so that it may have run there even
	 * without a reply.
	 */
	public boolean written() {
		return (this.nodeKindAndFlags & WRITTEN) != 0;
	}

	/**
	 * Whether the round's follow-up (the release behind a lost {@code SET}) was written
	 * right behind it, to be read off the caller's thread.
	 */
	public boolean followedUp() {
		return (this.nodeKindAndFlags & FOLLOWED_UP) != 0;
	}

	/** How a round trip to one node ended. */
	public enum Kind {

		/** The node answered with a value (possibly nil). */
		REPLIED,

		/**
		 * The node answered with an error reply, such as {@code NOSCRIPT} or
		 * {@code NOAUTH}.
		 */
		ERROR_REPLY,

		/** No answer within the node timeout. */
		TIMEOUT,

		/** The connection could not be made or broke. */
		UNREACHABLE,

		/**
		 * The node refused the credentials or the handshake of a new connection (e.g. a
		 * wrong password).
		 */
		AUTH_FAILED,

		/**
		 * The caller was interrupted while waiting for the reply; on a virtual thread
		 * that closes the connection. Says nothing about the node.
		 */
		INTERRUPTED,

		/**
		 * Sent, but the round was settled by the other nodes' replies before this one was
		 * read.
		 */
		NOT_AWAITED

	}

	/**
	 * How many nodes of a round have a reply so far: before any is read, those that
	 * failed or were left out.
	 * @param replies the round's replies by node, {@code null} for none yet
	 */
	static int count(@Nullable NodeReply[] replies) {
		int count = 0;
		for (NodeReply reply : replies) {
			if (reply != null) {
				count++;
			}
		}
		return count;
	}

	/**
	 * A reply read.
	 * @param value the value {@link RoundCommand#readFrom} read, which may say how long
	 * it waited for replicas
	 * @param nanos time from the start of the round until it was read
	 */
	public static NodeReply replied(int node, @Nullable Object value, long nanos) {
		return new NodeReply(node, Kind.REPLIED, value, nanos, true, false);
	}

	/**
	 * A reply read after waiting for replicas' acknowledgements (as a round's reply to
	 * {@code WAIT}ed calls reads).
	 * @param waitedNanos time from reading the calls' reply to reading {@code WAIT}'s
	 */
	public static NodeReply repliedAfterWait(int node, @Nullable Object value, long nanos, long waitedNanos) {
		return replied(node, new ReplicatedReply(value, waitedNanos), nanos);
	}

	/**
	 * A reply not waited for, once the round was settled.
	 * @param written whether the command was written (else its connection was still being
	 * opened)
	 * @param followedUp whether the follow-up was written behind it
	 */
	public static NodeReply notAwaited(int node, long nanos, boolean written, boolean followedUp) {
		return new NodeReply(node, Kind.NOT_AWAITED, null, nanos, written, followedUp);
	}

	static NodeReply interrupted(int node, Exception error, long nanos) {
		return new NodeReply(node, Kind.INTERRUPTED, error, nanos, true, false);
	}

	/** A failure after the command was written: it may still have run on the node. */
	public static NodeReply failed(int node, Exception error, long nanos) {
		return new NodeReply(node, classify(error), error, nanos, true, false);
	}

	/**
	 * A failure before the command was written (no connection, or none in time): it did
	 * not run.
	 */
	public static NodeReply notWritten(int node, Exception error, long nanos) {
		return new NodeReply(node, classify(error), error, nanos, false, false);
	}

	/**
	 * Whether the node gave a definite answer, so that nothing about it is left to find
	 * out.
	 */
	public boolean isDefinite() {
		return kind() == Kind.REPLIED;
	}

	private static Kind classify(Exception error) {
		if (error instanceof AuthenticationFailedException) {
			return Kind.AUTH_FAILED;
		}
		if (error instanceof JedisDataException) {
			return Kind.ERROR_REPLY;
		}
		if (error instanceof JedisConnectionException) {
			for (Throwable cause = error; cause != null; cause = cause.getCause()) {
				if (cause instanceof SocketTimeoutException) {
					return Kind.TIMEOUT;
				}
			}
		}
		return Kind.UNREACHABLE;
	}

	/**
	 * Whether a script confirmed it did its work: a positive count (a release adds its
	 * subscribers to its 1).
	 */
	public boolean isConfirmed() {
		return kind() == Kind.REPLIED && value() instanceof Long number && number > 0;
	}

	public boolean isNoScript() {
		return error() instanceof JedisNoScriptException;
	}

	/**
	 * The cluster's redirection, when the node answered {@code MOVED} (it does not serve
	 * the key's slot) or {@code ASK} (the key went to the node importing its slot):
	 * nothing ran on the node.
	 * @return the redirection, or {@code null} for any other reply
	 */
	public @Nullable JedisRedirectionException redirection() {
		return (error() instanceof JedisRedirectionException redirection) ? redirection : null;
	}

	/**
	 * Returns a short description of a failed round trip, without credentials.
	 * @return e.g. {@code timeout} or the Redis error text
	 */
	public String describeFailure() {
		return switch (kind()) {
			case REPLIED -> "replied";
			case TIMEOUT -> "timeout";
			case NOT_AWAITED -> "not awaited";
			case ERROR_REPLY, AUTH_FAILED -> String.valueOf(error().getMessage());
			case INTERRUPTED -> "interrupted";
			case UNREACHABLE -> "unreachable" + rootCauseText();
		};
	}

	private String rootCauseText() {
		Exception error = error();
		Throwable root = error;
		while (root != null && root.getCause() != null && root.getCause() != root) {
			root = root.getCause();
		}
		return (root != null && root != error && root.getMessage() != null) ? " (" + root.getMessage() + ")"
				: ((error != null && error.getMessage() != null) ? " (" + error.getMessage() + ")" : "");
	}

	@Override
	public String toString() {
		return "NodeReply[node=" + node() + ", kind=" + kind() + ", micros=" + this.micros + ", written=" + written()
				+ ", followedUp=" + followedUp() + "]";
	}

}
