package dev.redlock.core.internal.protocol;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.CommandArguments;

/**
 * One call of a round, as every node that runs native commands is to get it: told once
 * which of our scripts it calls, and translated once per kind of server by the first
 * connection that needs it, then shared by the others, so that a round over five nodes
 * allocates one native form, not five. Connections of the same round may translate at the
 * same time: both get equal commands, and either may be kept.
 */
public final class NativeForm {

	private final CommandArguments call;

	private final @Nullable NativeCall nativeCall;

	private volatile CommandArguments @Nullable [] delex;

	private volatile CommandArguments @Nullable [] delifeq;

	public NativeForm(CommandArguments call) {
		this.call = call;
		this.nativeCall = NativeCall.of(call);
	}

	/** Which of our scripts the call calls natively, {@code null} for another command. */
	public @Nullable NativeCall nativeCall() {
		return this.nativeCall;
	}

	/** The call as the round wrote it. */
	public CommandArguments call() {
		return this.call;
	}

	/**
	 * The commands to write in the call's place on a server with these native commands.
	 * @throws IllegalStateException for a call of no script we run natively
	 */
	public CommandArguments[] commands(LockCommands commands) {
		NativeCall nativeCall = this.nativeCall;
		if (nativeCall == null || !commands.isNative()) {
			throw new IllegalStateException("no native form of " + this.call.getCommand() + " for " + commands);
		}
		boolean delifeq = commands == LockCommands.DELIFEQ;
		CommandArguments[] translated = delifeq ? this.delifeq : this.delex;
		if (translated == null) {
			translated = nativeCall.commands(this.call, commands);
			if (delifeq) {
				this.delifeq = translated;
			}
			else {
				this.delex = translated;
			}
		}
		return translated;
	}

}
