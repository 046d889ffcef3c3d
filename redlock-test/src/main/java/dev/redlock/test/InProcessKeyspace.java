package dev.redlock.test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import dev.redlock.test.Resp.ErrorReply;

/**
 * The data and the commands of the in-process stand-in for Redis: string keys with a
 * millisecond expiry, the commands a {@code Redlock} and the kit send, and Lua scripts
 * ({@link InProcessLua}). Every command runs under the caller's lock on the whole
 * keyspace, so that a script is atomic, as on a Redis server.
 *
 * <p>
 * Replies are Java values: {@link StatusReply}, {@link Resp.ErrorReply}, {@code Long},
 * {@code byte[]} (a bulk string), {@code null} (the nil bulk string) and {@code List} (an
 * array).
 */
final class InProcessKeyspace {

	/** A status reply, {@code +OK}. */
	record StatusReply(String text) {
	}

	/** Delivers a message to the channel's subscribers. */
	interface Publisher {

		/**
		 * @return how many subscribers received it
		 */
		long publish(byte[] channel, byte[] message);

	}

	static final StatusReply OK = new StatusReply("OK");

	private static final Pattern NUMBER = Pattern.compile("-?\\d+");

	private final Map<String, Entry> keys = new HashMap<>();

	private final Map<String, Long> calls = new TreeMap<>();

	private final Map<String, String> config = new HashMap<>(
			Map.of("maxmemory-policy", "noeviction", "maxmemory", "0", "appendonly", "no", "save", ""));

	private final InProcessLua lua = new InProcessLua(this);

	private final String runId = hex(40);

	private final String replicationId = hex(40);

	private final long startedMillis = System.currentTimeMillis();

	private final int port;

	private final Publisher publisher;

	private long expiredKeys;

	private long commandsProcessed;

	InProcessKeyspace(int port, Publisher publisher) {
		this.port = port;
		this.publisher = publisher;
	}

	private record Entry(byte[] value, long expiresAtMillis) {

		boolean isExpired(long now) {
			return this.expiresAtMillis >= 0 && now >= this.expiresAtMillis;
		}

	}

	/**
	 * Runs one command that is not about the connection (those are the server's): call
	 * under {@code synchronized (keyspace)}.
	 * @param args the command's name and arguments
	 * @return the reply
	 */
	Object execute(List<byte[]> args) {
		String name = text(args.get(0)).toLowerCase(Locale.ROOT);
		this.commandsProcessed++;
		String counted = (args.size() > 1 && List.of("script", "client", "config", "command").contains(name))
				? name + "|" + text(args.get(1)).toLowerCase(Locale.ROOT) : name;
		this.calls.merge(counted, 1L, Long::sum);
		try {
			return run(name, args);
		}
		catch (IllegalArgumentException ex) {
			return new ErrorReply(ex.getMessage());
		}
	}

	private Object run(String name, List<byte[]> args) {
		long now = System.currentTimeMillis();
		switch (name) {
			case "ping":
				return (args.size() > 1) ? args.get(1) : new StatusReply("PONG");
			case "echo":
				return arg(args, 1);
			case "get":
				return value(text(arg(args, 1)), now);
			case "mget": {
				List<Object> values = new ArrayList<>();
				for (int i = 1; i < args.size(); i++) {
					values.add(value(text(args.get(i)), now));
				}
				return values;
			}
			case "set":
				return set(args, now);
			case "del":
			case "unlink": {
				long removed = 0;
				for (int i = 1; i < args.size(); i++) {
					if (value(text(args.get(i)), now) != null) {
						this.keys.remove(text(args.get(i)));
						removed++;
					}
				}
				return removed;
			}
			case "exists": {
				long found = 0;
				for (int i = 1; i < args.size(); i++) {
					found += (value(text(args.get(i)), now) != null) ? 1 : 0;
				}
				return found;
			}
			case "pexpire":
			case "expire": {
				String key = text(arg(args, 1));
				byte[] held = value(key, now);
				if (held == null) {
					return 0L;
				}
				long amount = number(arg(args, 2));
				long millis = name.equals("expire") ? amount * 1000 : amount;
				this.keys.put(key, new Entry(held, now + millis));
				return 1L;
			}
			case "pttl":
			case "ttl": {
				String key = text(arg(args, 1));
				if (value(key, now) == null) {
					return -2L;
				}
				Entry entry = this.keys.get(key);
				if (entry.expiresAtMillis() < 0) {
					return -1L;
				}
				long left = entry.expiresAtMillis() - now;
				return name.equals("ttl") ? (left + 999) / 1000 : left;
			}
			case "dbsize":
				purge(now);
				return (long) this.keys.size();
			case "keys":
			case "scan":
				return keys(name, args, now);
			case "flushall":
			case "flushdb":
				this.keys.clear();
				return OK;
			case "time": {
				long micros = System.currentTimeMillis() * 1000 + (System.nanoTime() / 1000) % 1000;
				return List.of(bytes(Long.toString(micros / 1_000_000)), bytes(Long.toString(micros % 1_000_000)));
			}
			case "info":
				return bytes(info((args.size() > 1) ? text(args.get(1)).toLowerCase(Locale.ROOT) : "all", now));
			case "config":
				return config(args);
			case "command":
				return command(args);
			case "script":
				return this.lua.script(args);
			case "eval":
			case "evalsha":
				return this.lua.eval(name.equals("evalsha"), args);
			case "publish":
				return this.publisher.publish(arg(args, 1), arg(args, 2));
			case "select":
				return (number(arg(args, 1)) == 0) ? OK : new ErrorReply("ERR DB index is out of range");
			default:
				return new ErrorReply("ERR unknown command '" + name + "', with args beginning with: "
						+ "(the in-process stand-in for Redis does not have it)");
		}
	}

	private Object set(List<byte[]> args, long now) {
		String key = text(arg(args, 1));
		byte[] value = arg(args, 2);
		boolean ifAbsent = false;
		boolean ifPresent = false;
		boolean get = false;
		boolean keepTtl = false;
		long expiresAt = -1;
		for (int i = 3; i < args.size(); i++) {
			String option = text(args.get(i)).toUpperCase(Locale.ROOT);
			switch (option) {
				case "NX" -> ifAbsent = true;
				case "XX" -> ifPresent = true;
				case "GET" -> get = true;
				case "KEEPTTL" -> keepTtl = true;
				case "PX" -> expiresAt = now + positive(arg(args, ++i));
				case "EX" -> expiresAt = now + positive(arg(args, ++i)) * 1000;
				default -> throw new IllegalArgumentException("ERR syntax error");
			}
		}
		byte[] old = value(key, now);
		if ((ifAbsent && old != null) || (ifPresent && old == null)) {
			return get ? old : null;
		}
		if (keepTtl && old != null) {
			expiresAt = this.keys.get(key).expiresAtMillis();
		}
		this.keys.put(key, new Entry(value, expiresAt));
		return get ? old : OK;
	}

	private Object keys(String name, List<byte[]> args, long now) {
		String pattern = "*";
		for (int i = name.equals("scan") ? 2 : 1; i < args.size(); i++) {
			String word = text(args.get(i));
			if (name.equals("keys")) {
				pattern = word;
			}
			else if (word.equalsIgnoreCase("MATCH")) {
				pattern = text(arg(args, ++i));
			}
			else if (word.equalsIgnoreCase("COUNT") || word.equalsIgnoreCase("TYPE")) {
				i++;
			}
		}
		purge(now);
		Pattern glob = glob(pattern);
		List<Object> found = new ArrayList<>();
		for (String key : this.keys.keySet()) {
			if (glob.matcher(key).matches()) {
				found.add(bytes(key));
			}
		}
		// one pass returns every key, with cursor 0: SCAN allows a pass to return more
		return name.equals("keys") ? found : List.of(bytes("0"), found);
	}

	private Object config(List<byte[]> args) {
		String sub = text(arg(args, 1)).toLowerCase(Locale.ROOT);
		if (sub.equals("get")) {
			Pattern glob = glob(text(arg(args, 2)));
			List<Object> pairs = new ArrayList<>();
			this.config.forEach((key, value) -> {
				if (glob.matcher(key).matches()) {
					pairs.add(bytes(key));
					pairs.add(bytes(value));
				}
			});
			return pairs;
		}
		if (sub.equals("resetstat")) {
			this.calls.clear();
			this.commandsProcessed = 0;
			this.expiredKeys = 0;
			return OK;
		}
		if (sub.equals("set")) {
			for (int i = 2; i + 1 < args.size(); i += 2) {
				this.config.put(text(args.get(i)).toLowerCase(Locale.ROOT), text(args.get(i + 1)));
			}
			return OK;
		}
		return new ErrorReply("ERR unknown subcommand '" + sub + "' of CONFIG");
	}

	private Object command(List<byte[]> args) {
		if (args.size() > 1 && text(args.get(1)).equalsIgnoreCase("INFO")) {
			// none of the commands asked about: DELEX and DELIFEQ are not served
			List<Object> entries = new ArrayList<>();
			for (int i = 2; i < args.size(); i++) {
				entries.add(null);
			}
			return entries;
		}
		return new ArrayList<>();
	}

	private String info(String section, long now) {
		purge(now);
		long uptime = (now - this.startedMillis) / 1000;
		StringBuilder info = new StringBuilder();
		boolean all = section.equals("all") || section.equals("everything") || section.equals("default");
		if (all || section.equals("server")) {
			info.append("# Server\r\nredis_version:7.0.0\r\nredlock_in_process_stand_in:1\r\nredis_mode:standalone\r\n")
				.append("run_id:")
				.append(this.runId)
				.append("\r\ntcp_port:")
				.append(this.port)
				.append("\r\nuptime_in_seconds:")
				.append(uptime)
				.append("\r\nuptime_in_days:")
				.append(uptime / 86_400)
				.append("\r\n\r\n");
		}
		if (all || section.equals("replication")) {
			info.append("# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_replid:")
				.append(this.replicationId)
				.append("\r\nmaster_replid2:0000000000000000000000000000000000000000\r\n")
				.append("master_repl_offset:0\r\nsecond_repl_offset:-1\r\n\r\n");
		}
		if (all || section.equals("stats")) {
			info.append("# Stats\r\ntotal_commands_processed:")
				.append(this.commandsProcessed)
				.append("\r\nexpired_keys:")
				.append(this.expiredKeys)
				.append("\r\nevicted_keys:0\r\n\r\n");
		}
		if (all || section.equals("memory")) {
			info.append("# Memory\r\nmaxmemory:")
				.append(this.config.get("maxmemory"))
				.append("\r\nmaxmemory_policy:")
				.append(this.config.get("maxmemory-policy"))
				.append("\r\n\r\n");
		}
		if (section.equals("all") || section.equals("everything") || section.equals("commandstats")) {
			info.append("# Commandstats\r\n");
			this.calls.forEach((command, count) -> info.append("cmdstat_")
				.append(command)
				.append(":calls=")
				.append(count)
				.append(",usec=0,usec_per_call=0.00,rejected_calls=0,failed_calls=0\r\n"));
			info.append("\r\n");
		}
		if (all || section.equals("keyspace")) {
			info.append("# Keyspace\r\n");
			if (!this.keys.isEmpty()) {
				long expires = this.keys.values().stream().filter((entry) -> entry.expiresAtMillis() >= 0).count();
				info.append("db0:keys=")
					.append(this.keys.size())
					.append(",expires=")
					.append(expires)
					.append(",avg_ttl=0\r\n");
			}
		}
		return info.toString();
	}

	/**
	 * The value of a key, or {@code null} when it is missing or expired (then removed).
	 */
	private byte @Nullable [] value(String key, long now) {
		Entry entry = this.keys.get(key);
		if (entry == null) {
			return null;
		}
		if (entry.isExpired(now)) {
			this.keys.remove(key);
			this.expiredKeys++;
			return null;
		}
		return entry.value();
	}

	private void purge(long now) {
		for (Iterator<Entry> entries = this.keys.values().iterator(); entries.hasNext();) {
			if (entries.next().isExpired(now)) {
				entries.remove();
				this.expiredKeys++;
			}
		}
	}

	private static byte[] arg(List<byte[]> args, int index) {
		if (index >= args.size()) {
			throw new IllegalArgumentException(
					"ERR wrong number of arguments for '" + text(args.get(0)).toLowerCase(Locale.ROOT) + "' command");
		}
		return args.get(index);
	}

	private static long number(byte[] value) {
		String text = text(value);
		if (!NUMBER.matcher(text).matches()) {
			throw new IllegalArgumentException("ERR value is not an integer or out of range");
		}
		return Long.parseLong(text);
	}

	private static long positive(byte[] value) {
		long number = number(value);
		if (number <= 0) {
			throw new IllegalArgumentException("ERR invalid expire time in 'set' command");
		}
		return number;
	}

	/**
	 * A Redis glob as a regular expression: {@code *}, {@code ?}, {@code [...]},
	 * {@code \}.
	 */
	private static Pattern glob(String glob) {
		StringBuilder regex = new StringBuilder();
		for (int i = 0; i < glob.length(); i++) {
			char c = glob.charAt(i);
			switch (c) {
				case '*' -> regex.append(".*");
				case '?' -> regex.append('.');
				case '[' -> {
					int end = glob.indexOf(']', i + 1);
					if (end < 0) {
						regex.append("\\[");
					}
					else {
						regex.append('[').append(glob, i + 1, end).append(']');
						i = end;
					}
				}
				case '\\' -> {
					if (i + 1 < glob.length()) {
						regex.append(Pattern.quote(String.valueOf(glob.charAt(++i))));
					}
				}
				default -> regex.append(Pattern.quote(String.valueOf(c)));
			}
		}
		return Pattern.compile(regex.toString(), Pattern.DOTALL);
	}

	/** Bytes as a key: one char per byte, so that any bytes make a key and back. */
	static String text(byte[] bytes) {
		return new String(bytes, StandardCharsets.ISO_8859_1);
	}

	static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.ISO_8859_1);
	}

	static boolean same(byte @Nullable [] a, byte @Nullable [] b) {
		return Arrays.equals(a, b);
	}

	private static String hex(int length) {
		StringBuilder hex = new StringBuilder(length);
		for (int i = 0; i < length; i++) {
			hex.append(Character.forDigit(ThreadLocalRandom.current().nextInt(16), 16));
		}
		return hex.toString();
	}

}
