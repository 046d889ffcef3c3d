package dev.redlock.core.internal.protocol;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.Protocol.Keyword;
import redis.clients.jedis.args.Rawable;
import redis.clients.jedis.commands.ProtocolCommand;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * A call of one of the lock scripts a server can run natively ({@link LockCommands}), and
 * how its native form is written and its replies read back as the script's own reply, so
 * that nothing above the connection knows which of the two a node ran:
 * <ul>
 * <li>{@link LockScripts#RELEASE}: {@code DELEX key IFEQ value} (or
 * {@code DELIFEQ key value}), then {@code PUBLISH} on the release channel, in the same
 * write; read as 1 plus the subscribers that heard it when deleted, else 0. The notice
 * goes out even when nothing was deleted (the lease was lost already): a waiter woken for
 * nothing tries once and waits again.</li>
 * <li>{@link LockScripts#DISCARD}: the compare-and-delete alone, 1 or 0.</li>
 * <li>{@link LockScripts#EXTEND}: {@code SET key value IFEQ value GET PX ttl}, which
 * answers the value the key held whatever the comparison gave: ours (extended, 1), none
 * (expired, 0) or another (taken, -1), as the script does.</li>
 * </ul>
 */
public enum NativeCall {

	/** {@link LockScripts#RELEASE}. */
	RELEASE(LockScripts.RELEASE, 2),

	/** {@link LockScripts#DISCARD}. */
	DISCARD(LockScripts.DISCARD, 1),

	/** {@link LockScripts#EXTEND}. */
	EXTEND(LockScripts.EXTEND, 1);

	private static final byte[] DELIFEQ_NAME = "DELIFEQ".getBytes(StandardCharsets.US_ASCII);

	/**
	 * Valkey's command, which Jedis does not name; its name encoded once for every call.
	 */
	private static final ProtocolCommand DELIFEQ = () -> DELIFEQ_NAME;

	/** {@link #values()} without a copy per call. */
	private static final NativeCall[] ALL = values();

	private static final byte[] CHANNEL_PREFIX = LockScripts.RELEASED_CHANNEL_PREFIX.getBytes(StandardCharsets.UTF_8);

	private static final Long EXTENDED = 1L;

	private static final Long GONE = 0L;

	private static final Long TAKEN = -1L;

	private final LockScripts.Script script;

	private final int replies;

	NativeCall(LockScripts.Script script, int replies) {
		this.script = script;
		this.replies = replies;
	}

	/**
	 * The native form of a call of one of our scripts, by digest ({@code EVALSHA}) or by
	 * source ({@code EVAL}), with its one key and arguments.
	 * @return the call, or {@code null} for any other command
	 */
	public static @Nullable NativeCall of(CommandArguments call) {
		boolean byDigest = call.getCommand() == Command.EVALSHA;
		if ((!byDigest && call.getCommand() != Command.EVAL) || call.size() < 5) {
			return null;
		}
		byte[] script = call.get(1).getRaw();
		for (NativeCall candidate : ALL) {
			RawArgument named = byDigest ? candidate.script.sha1() : candidate.script.source();
			if (Arrays.equals(named.getRaw(), script)) {
				return (call.size() == 5 + ((candidate == EXTEND) ? 1 : 0)) ? candidate : null;
			}
		}
		return null;
	}

	/** How many replies its native form has: the commands it writes. */
	public int replies() {
		return this.replies;
	}

	/** The call's value: what the key must hold. */
	public static Rawable value(CommandArguments call) {
		return call.get(4);
	}

	/**
	 * The native form of a call: the commands to write in its place.
	 * @param call the script's call, as {@link #of} took it
	 * @param commands the server's commands, native ones
	 * @return {@link #replies()} commands
	 */
	public CommandArguments[] commands(CommandArguments call, LockCommands commands) {
		Rawable key = call.get(3);
		Rawable value = call.get(4);
		if (this == EXTEND) {
			return new CommandArguments[] { new CommandArguments(Command.SET).add(key)
				.add(value)
				.add(Keyword.IFEQ)
				.add(value)
				.add(Keyword.GET)
				.add(Keyword.PX)
				.add(call.get(5)) };
		}
		CommandArguments delete = (commands == LockCommands.DELIFEQ) ? new CommandArguments(DELIFEQ).add(key).add(value)
				: new CommandArguments(Command.DELEX).add(key).add(Keyword.IFEQ).add(value);
		if (this == DISCARD) {
			return new CommandArguments[] { delete };
		}
		return new CommandArguments[] { delete,
				new CommandArguments(Command.PUBLISH).add(channel(key.getRaw())).add(value) };
	}

	private static byte[] channel(byte[] key) {
		byte[] channel = Arrays.copyOf(CHANNEL_PREFIX, CHANNEL_PREFIX.length + key.length);
		System.arraycopy(key, 0, channel, CHANNEL_PREFIX.length, key.length);
		return channel;
	}

	/**
	 * Reads the native replies as the script's reply.
	 * @param value the call's {@link #value}
	 * @param first the reply to the first command, an error as its exception
	 * @param second the reply to the second, for {@link #RELEASE}
	 * @return the reply the script would have given
	 * @throws NativeCommandRefusedException when the node refused the command itself
	 * (unknown, not permitted, syntax): nothing was changed, the call may go as a script
	 * @throws JedisDataException for any other error reply
	 */
	public @Nullable Object fold(Rawable value, @Nullable Object first, @Nullable Object second) {
		if (first instanceof JedisDataException error) {
			throw refuses(error) ? new NativeCommandRefusedException(error) : error;
		}
		return switch (this) {
			case EXTEND -> (first == null) ? GONE
					: (first instanceof byte[] held && Arrays.equals(held, value.getRaw())) ? EXTENDED : TAKEN;
			case DISCARD -> first;
			case RELEASE -> (first instanceof Long deleted && deleted == 1)
					? ((second instanceof Long heard) ? (Long) (1 + heard) : EXTENDED) : GONE;
		};
	}

	/**
	 * Whether an error reply says the server does not run the command as we sent it: an
	 * unknown command or option, or an ACL user without it. A {@code WRONGTYPE} or an
	 * out-of-memory reply is the key's or the node's state, and a script would get it
	 * too.
	 */
	static boolean refuses(JedisDataException error) {
		String message = String.valueOf(error.getMessage());
		return message.startsWith("NOPERM") || message.contains("unknown command") || message.contains("syntax error")
				|| message.contains("wrong number of arguments") || message.contains("unknown subcommand");
	}

	/**
	 * A node refused a native command: nothing ran, and the call goes again as a script,
	 * as after {@code NOSCRIPT} (which is why it is one).
	 */
	public static final class NativeCommandRefusedException extends JedisNoScriptException {

		private static final long serialVersionUID = 1L;

		NativeCommandRefusedException(JedisDataException refusal) {
			super(refusal.getMessage(), refusal);
		}

	}

}
