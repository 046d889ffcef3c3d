package dev.redlock.core.internal.protocol;

import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;

/**
 * What a server runs a lock's compare-and-delete and compare-and-extend with: our Lua
 * scripts, or the commands newer servers have for it. Redis 8.4 and later have
 * {@code DELEX key IFEQ value}, Valkey 9 {@code DELIFEQ key value}; both have
 * {@code SET key value IFEQ value GET PX ttl}. Valkey reports {@code redis_version}
 * 7.2.4, so the server is asked which commands it knows ({@link #QUESTION}), not which
 * version it is.
 */
public enum LockCommands {

	/** Lua scripts: every server from Redis 2.6 on. */
	SCRIPTS,

	/** {@code DELEX key IFEQ value} and {@code SET … IFEQ}: Redis 8.4 and later. */
	DELEX,

	/** {@code DELIFEQ key value} and {@code SET … IFEQ}: Valkey 9 and later. */
	DELIFEQ;

	/** The greeting's question: {@code COMMAND INFO DELEX DELIFEQ}. */
	public static final CommandArguments QUESTION = new CommandArguments(Command.COMMAND).add("INFO")
		.add("DELEX")
		.add("DELIFEQ");

	/**
	 * What a server's answer to {@link #QUESTION} offers: an entry for each command it
	 * knows, nil for one it does not; an error reply (a user without {@code COMMAND}, an
	 * older server) leaves the scripts.
	 * @param reply the reply, an error as its exception
	 */
	public static LockCommands fromCommandInfo(@Nullable Object reply) {
		if (!(reply instanceof List<?> entries) || entries.size() != 2) {
			return SCRIPTS;
		}
		if (entries.get(0) instanceof List<?>) {
			return DELEX;
		}
		return (entries.get(1) instanceof List<?>) ? DELIFEQ : SCRIPTS;
	}

	/**
	 * The commands as health and {@code checkNodes()} show them.
	 * @return {@code scripts}, {@code delex} or {@code delifeq}
	 */
	public String tag() {
		return name().toLowerCase(Locale.ROOT);
	}

	/** Whether these are native commands, not scripts. */
	public boolean isNative() {
		return this != SCRIPTS;
	}

}
