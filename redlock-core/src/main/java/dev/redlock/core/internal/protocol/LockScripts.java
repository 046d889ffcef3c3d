package dev.redlock.core.internal.protocol;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;

/**
 * The Lua scripts that touch a lock key only while it still holds the caller's value,
 * with their SHA-1 digests for {@code EVALSHA}.
 *
 * <p>
 * Fencing counts are written with {@code string.format('%d', …)}: Lua writes numbers from
 * 10^14 on as {@code 1e+14}, which would stop a counter there. Lua numbers are doubles,
 * so a count is exact up to 2^53.
 */
public final class LockScripts {

	/**
	 * Deletes the key if it holds ARGV[1] and announces it on the key's
	 * {@link #RELEASED_CHANNEL_PREFIX release channel}, with the value as the message:
	 * returns 1 plus the number of subscribers that got the message when deleted, 0 when
	 * the key is gone or someone else's. A refused announcement (an ACL user without that
	 * channel, the default for new users from Redis 7 on) does not fail the release:
	 * waiters then find the lock free by polling.
	 */
	public static final Script RELEASE = new Script("""
			if redis.call('get', KEYS[1]) == ARGV[1] then
			  redis.call('del', KEYS[1])
			  local heard = redis.pcall('publish', 'redlock-released:' .. KEYS[1], ARGV[1])
			  if type(heard) == 'number' then
			    return 1 + heard
			  end
			  return 1
			end
			return 0
			""");

	/**
	 * Deletes the key if it holds ARGV[1], without announcing it: for the clean-up of a
	 * value that never made a lock (a lost round's), and for repeating a release on a
	 * node that did not confirm it in time (the other nodes announced it). Returns 1 when
	 * deleted, 0 when the key is gone or someone else's.
	 */
	public static final Script DISCARD = new Script("""
			if redis.call('get', KEYS[1]) == ARGV[1] then
			  return redis.call('del', KEYS[1])
			end
			return 0
			""");

	/**
	 * What the channel on which {@link #RELEASE} announces a release starts with, before
	 * the lock key.
	 */
	public static final String RELEASED_CHANNEL_PREFIX = "redlock-released:";

	/**
	 * Sets a new TTL of ARGV[2] ms if the key holds ARGV[1]: returns 1 when extended, 0
	 * when the key is gone (expired), -1 when it holds another value (taken). An expired
	 * key is never re-created.
	 */
	public static final Script EXTEND = new Script("""
			local held = redis.call('get', KEYS[1])
			if held == ARGV[1] then
			  return redis.call('pexpire', KEYS[1], ARGV[2])
			end
			return held and -1 or 0
			""");

	/**
	 * Fenced acquisition when nodes are not judged (the restart quarantine is off):
	 * {@code SET KEYS[1] ARGV[1] NX PX ARGV[2]} and, if the lock was set, in the same
	 * step, the increment of the resource's counter KEYS[2] (no TTL; {@code <count>} or
	 * {@code <count> <generation>}, the generation kept). Returns {@code {count,
	 * ARGV[1]}}: the count after the increment, 0 when the key was taken, -1 when the
	 * counter is not a number (the key is then ours, yet no grant); the value, so that
	 * the reply proves which command it answers.
	 */
	public static final Script ACQUIRE_COUNTED = new Script("""
			if not redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
			  return {0, ARGV[1]}
			end
			local stored = redis.call('get', KEYS[2]) or '0'
			local space = string.find(stored, ' ', 1, true)
			local count = tonumber(space and string.sub(stored, 1, space - 1) or stored)
			if not count then
			  return {-1, ARGV[1]}
			end
			count = count + 1
			local text = string.format('%d', count)
			redis.call('set', KEYS[2], space and (text .. string.sub(stored, space)) or text)
			return {count, ARGV[1]}
			""");

	/**
	 * Fenced acquisition when nodes are judged (the restart quarantine is on; without it,
	 * {@link #ACQUIRE_COUNTED} does): {@code SET KEYS[1] ARGV[1] NX PX ARGV[2]}, with the
	 * node's clock and its marker read in the same step (they judge whether this very
	 * grant may count; the marker by name, with {@code pcall}, so that an ACL user who
	 * may not read it still locks: it then reads {@code -} (Redis 7 and later say
	 * {@code NOPERM}, 6.2 that the user "can't access" the key), and {@code ?} when the
	 * node could not read it for another reason, a cluster's slot served elsewhere), and,
	 * if the lock was set, the increment of the resource's counter KEYS[2] (no TTL),
	 * whose value is {@code <count>} or {@code <count> <generation>}: the generation of
	 * the node's marker when a quorum last confirmed it. Returns {@code {count or 0,
	 * seconds, microseconds, marker or nil, generation or ''}}.
	 */
	public static final Script ACQUIRE_FENCED = new Script("""
			local time = redis.call('time')
			local marker = redis.pcall('get', '{fence}')
			if type(marker) == 'table' then
			  local err = marker['err'] or ''
			  local denied = string.find(err, 'NOPERM', 1, true) or string.find(err, "can't access", 1, true)
			  marker = denied and '-' or '?'
			end
			if not redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
			  return {0, time[1], time[2], marker}
			end
			local stored = redis.call('get', KEYS[2]) or '0'
			local space = string.find(stored, ' ', 1, true)
			local count = tonumber(space and string.sub(stored, 1, space - 1) or stored) + 1
			local text = string.format('%d', count)
			local generation = space and string.sub(stored, space + 1) or ''
			redis.call('set', KEYS[2], (generation == '') and text or (text .. ' ' .. generation))
			return {count, time[1], time[2], marker, generation}
			""");

	/**
	 * The second round of a fenced acquisition, run only when the counts its grants read
	 * differ: if KEYS[1] holds ARGV[1], raises the counter KEYS[2] to at least the token
	 * ARGV[2], records the generation of the node's marker with it (the counter is now
	 * confirmed by a quorum for that generation) and returns 1; else 0.
	 */
	public static final Script RAISE_FENCE = new Script("""
			if redis.call('get', KEYS[1]) == ARGV[1] then
			  local stored = redis.call('get', KEYS[2]) or '0'
			  local space = string.find(stored, ' ', 1, true)
			  local count = tonumber(space and string.sub(stored, 1, space - 1) or stored)
			  local token = string.format('%d', math.max(count, tonumber(ARGV[2])))
			  local marker = redis.pcall('get', '{fence}')
			  local generation = (type(marker) == 'string') and string.match(marker, '^%S+ %S+ (%S+)') or nil
			  redis.call('set', KEYS[2], generation and (token .. ' ' .. generation) or token)
			  return 1
			end
			return 0
			""");

	/**
	 * {@link #ACQUIRE_FENCED} for a node whose marker is a key of its own, named by
	 * ARGV[3] ({@link KeyLayout#TAGGED}): read without being declared, since it is in
	 * another slot than the lock's, on the same node.
	 */
	public static final Script ACQUIRE_FENCED_OWN_MARKER = ownMarker(ACQUIRE_FENCED);

	/**
	 * {@link #RAISE_FENCE} for a node whose marker is a key of its own, named by ARGV[3].
	 */
	public static final Script RAISE_FENCE_OWN_MARKER = ownMarker(RAISE_FENCE);

	/**
	 * Writes a node's marker KEYS[1] if it still is ARGV[1] (empty: if there is none), a
	 * compare-and-set, so that no client writes over a marker it did not read: the new
	 * value is ARGV[2] (every field but the epoch and the evidence), the epoch, and
	 * ARGV[3] (the evidence). The epoch is set here, on the node: one more than the old
	 * one, and at least the node's time in ms, so that it only ever rises. Returns the
	 * marker in place afterwards (nil when there is none).
	 */
	public static final Script WRITE_MARKER = new Script("""
			local current = redis.call('get', KEYS[1])
			if (current or '') ~= ARGV[1] then
			  return current
			end
			local old = 0
			if current then
			  local field = 0
			  for word in string.gmatch(current, '%S+') do
			    field = field + 1
			    if field == 6 then old = tonumber(word) or 0 end
			  end
			end
			local time = redis.call('time')
			local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
			local marker = ARGV[2] .. ' ' .. string.format('%d', math.max(old + 1, now)) .. ' ' .. ARGV[3]
			redis.call('set', KEYS[1], marker)
			return marker
			""");

	/**
	 * What a resource's fencing counter key starts with, before its lock key. Lock keys
	 * starting with it are refused, so the two key spaces never meet, whatever the key
	 * prefix.
	 */
	public static final String FENCE_KEY_PREFIX = "{fence}";

	/**
	 * Re-seeds fencing counters: for each counter KEYS[i] and count ARGV[i + 1], raises
	 * the counter to at least that count with the generation ARGV[1], if the marker still
	 * has that generation; returns how many were written, -1 when the marker changed.
	 */
	public static final Script RESEED_COUNTERS = new Script("""
			local marker = redis.call('get', '{fence}')
			if not marker or string.match(marker, '^%S+ %S+ (%S+)') ~= ARGV[1] then
			  return -1
			end
			for i, key in ipairs(KEYS) do
			  local stored = redis.call('get', key) or '0'
			  local space = string.find(stored, ' ', 1, true)
			  local count = tonumber(space and string.sub(stored, 1, space - 1) or stored) or 0
			  local seeded = string.format('%d', math.max(count, tonumber(ARGV[i + 1])))
			  redis.call('set', key, seeded .. ' ' .. ARGV[1])
			end
			return #KEYS
			""");

	/**
	 * Marks a marker's counters re-seeded: if the marker KEYS[1] still has the generation
	 * ARGV[1], sets its counters field to {@code ok} and raises its epoch as
	 * {@link #WRITE_MARKER} does, the other fields kept; returns 1 when set.
	 */
	public static final Script COUNTERS_RESEEDED = new Script("""
			local marker = redis.call('get', KEYS[1])
			if not marker or string.match(marker, '^%S+ %S+ (%S+)') ~= ARGV[1] then
			  return 0
			end
			local fields = {}
			for word in string.gmatch(marker, '%S+') do
			  fields[#fields + 1] = word
			end
			local time = redis.call('time')
			local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
			fields[5] = 'ok'
			fields[6] = string.format('%d', math.max((tonumber(fields[6] or '0') or 0) + 1, now))
			fields[7] = fields[7] or '-'
			redis.call('set', KEYS[1], table.concat(fields, ' '))
			return 1
			""");

	/**
	 * The scripts of every lock and release, run by digest ({@code EVALSHA}): loaded on
	 * every new connection, and called again by source where a node lost them.
	 */
	public static final List<Script> CACHED = List.of(RELEASE, DISCARD, EXTEND, ACQUIRE_COUNTED, ACQUIRE_FENCED,
			RAISE_FENCE, ACQUIRE_FENCED_OWN_MARKER, RAISE_FENCE_OWN_MARKER);

	/**
	 * The cached script with this digest.
	 * @param sha1 a digest as sent with {@code EVALSHA}
	 * @return the script, or {@code null} when none of ours has that digest
	 */
	public static @Nullable Script byDigest(byte[] sha1) {
		for (Script script : CACHED) {
			if (Arrays.equals(script.sha1().getRaw(), sha1)) {
				return script;
			}
		}
		return null;
	}

	/** The number of keys the fencing scripts take: the lock and its counter. */
	public static final RawArgument TWO_KEYS = RawArgument.of(2);

	private LockScripts() {
	}

	/**
	 * The SHA-1 of a text's UTF-8 bytes, in lower-case hex: a script's digest as
	 * {@code EVALSHA} wants it.
	 */
	static String sha1Hex(String text) {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
			return HexFormat.of().formatHex(digest);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-1 is required by the Java platform", ex);
		}
	}

	/** The number of keys the other lock scripts take. */
	static final RawArgument ONE_KEY = RawArgument.of(1);

	/**
	 * Forms a call of a one-key lock script.
	 * @param command {@code EVALSHA} with the digest, or {@code EVAL} with the source
	 * @param script the digest or the source
	 * @param key the lock key
	 * @param args the script's arguments
	 * @return the command
	 */
	public static CommandArguments call(Command command, RawArgument script, RawArgument key, RawArgument... args) {
		CommandArguments arguments = new CommandArguments(command).add(script).add(ONE_KEY).add(key);
		for (RawArgument arg : args) {
			arguments.add(arg);
		}
		return arguments;
	}

	/**
	 * The script with the marker read from the key ARGV[3] names, not from
	 * {@code {fence}}.
	 */
	private static Script ownMarker(Script script) {
		return new Script(markerNamed(script, "ARGV[3]"));
	}

	/**
	 * A script's source with the marker read from another key than {@code {fence}}.
	 * @param script a script that reads the marker
	 * @param markerKey a Lua expression: a quoted key, or an argument
	 */
	public static String markerNamed(Script script, String markerKey) {
		String source = script.source().toString();
		String named = source.replace("'" + FENCE_KEY_PREFIX + "'", markerKey);
		if (named.equals(source)) {
			throw new IllegalArgumentException("the script reads no marker");
		}
		return named;
	}

	/** A script and its SHA-1 hex digest, both encoded once for every call. */
	public record Script(RawArgument source, RawArgument sha1) {

		Script(String source) {
			this(RawArgument.of(source), RawArgument.of(sha1Hex(source)));
		}

	}

}
