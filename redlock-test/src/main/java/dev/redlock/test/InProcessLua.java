package dev.redlock.test;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.luaj.vm2.Globals;
import org.luaj.vm2.LoadState;
import org.luaj.vm2.LuaError;
import org.luaj.vm2.LuaString;
import org.luaj.vm2.LuaTable;
import org.luaj.vm2.LuaValue;
import org.luaj.vm2.Varargs;
import org.luaj.vm2.compiler.LuaC;
import org.luaj.vm2.lib.PackageLib;
import org.luaj.vm2.lib.StringLib;
import org.luaj.vm2.lib.TableLib;
import org.luaj.vm2.lib.VarArgFunction;
import org.luaj.vm2.lib.jse.JseBaseLib;
import org.luaj.vm2.lib.jse.JseMathLib;

import dev.redlock.test.InProcessKeyspace.StatusReply;
import dev.redlock.test.Resp.ErrorReply;

/**
 * {@code EVAL}, {@code EVALSHA} and {@code SCRIPT} for the in-process stand-in: scripts
 * run in LuaJ with Redis's {@code KEYS}, {@code ARGV} and {@code redis.call},
 * {@code redis.pcall}, {@code redis.status_reply} and {@code redis.error_reply}, and
 * Redis's conversions between Lua values and replies. Only the base, string, table and
 * math libraries are loaded. Called under the keyspace's lock.
 */
final class InProcessLua {

	private final InProcessKeyspace keyspace;

	private final Globals globals = new Globals();

	private final Map<String, LuaValue> scripts = new HashMap<>();

	InProcessLua(InProcessKeyspace keyspace) {
		this.keyspace = keyspace;
		this.globals.load(new JseBaseLib());
		this.globals.load(new PackageLib());
		this.globals.load(new TableLib());
		this.globals.load(new StringLib());
		this.globals.load(new JseMathLib());
		LoadState.install(this.globals);
		LuaC.install(this.globals);
		LuaTable redis = new LuaTable();
		redis.set("call", new Call(false));
		redis.set("pcall", new Call(true));
		redis.set("status_reply", new ReplyTable("ok"));
		redis.set("error_reply", new ReplyTable("err"));
		this.globals.set("redis", redis);
		this.globals.get("string").set("format", new Format());
	}

	/** {@code SCRIPT LOAD}, {@code EXISTS} and {@code FLUSH}. */
	Object script(List<byte[]> args) {
		String sub = (args.size() > 1) ? InProcessKeyspace.text(args.get(1)).toLowerCase(Locale.ROOT) : "";
		switch (sub) {
			case "load": {
				String source = InProcessKeyspace.text(args.get(2));
				String sha = sha1(args.get(2));
				Object compiled = compile(sha, source);
				return (compiled instanceof ErrorReply) ? compiled : InProcessKeyspace.bytes(sha);
			}
			case "exists": {
				List<Object> found = new ArrayList<>();
				for (int i = 2; i < args.size(); i++) {
					String sha = InProcessKeyspace.text(args.get(i)).toLowerCase(Locale.ROOT);
					found.add(this.scripts.containsKey(sha) ? 1L : 0L);
				}
				return found;
			}
			case "flush":
				this.scripts.clear();
				return InProcessKeyspace.OK;
			default:
				return new ErrorReply("ERR unknown subcommand '" + sub + "' of SCRIPT");
		}
	}

	/** {@code EVAL script numkeys key... arg...}, or {@code EVALSHA sha1 ...}. */
	Object eval(boolean bySha, List<byte[]> args) {
		if (args.size() < 3) {
			return new ErrorReply("ERR wrong number of arguments for '" + (bySha ? "evalsha" : "eval") + "' command");
		}
		LuaValue function;
		if (bySha) {
			function = this.scripts.get(InProcessKeyspace.text(args.get(1)).toLowerCase(Locale.ROOT));
			if (function == null) {
				return new ErrorReply("NOSCRIPT No matching script. Please use EVAL.");
			}
		}
		else {
			Object compiled = compile(sha1(args.get(1)), InProcessKeyspace.text(args.get(1)));
			if (compiled instanceof ErrorReply error) {
				return error;
			}
			function = (LuaValue) compiled;
		}
		int keyCount;
		try {
			keyCount = Integer.parseInt(InProcessKeyspace.text(args.get(2)));
		}
		catch (NumberFormatException ex) {
			return new ErrorReply("ERR value is not an integer or out of range");
		}
		if (keyCount < 0 || 3 + keyCount > args.size()) {
			return new ErrorReply("ERR Number of keys can't be greater than number of args");
		}
		this.globals.set("KEYS", table(args.subList(3, 3 + keyCount)));
		this.globals.set("ARGV", table(args.subList(3 + keyCount, args.size())));
		try {
			return reply(function.call());
		}
		catch (LuaError ex) {
			return new ErrorReply("ERR Error running script: " + ex.getMessage());
		}
	}

	private Object compile(String sha, String source) {
		LuaValue compiled = this.scripts.get(sha);
		if (compiled != null) {
			return compiled;
		}
		try {
			compiled = this.globals.load(source, "=script_" + sha);
		}
		catch (LuaError ex) {
			return new ErrorReply("ERR Error compiling script: " + ex.getMessage());
		}
		this.scripts.put(sha, compiled);
		return compiled;
	}

	private static LuaTable table(List<byte[]> values) {
		LuaTable table = new LuaTable();
		for (int i = 0; i < values.size(); i++) {
			table.set(i + 1, LuaString.valueOf(values.get(i)));
		}
		return table;
	}

	/** A Lua value as Redis answers it. */
	private static @Nullable Object reply(LuaValue value) {
		if (value.isnil() || (value.isboolean() && !value.toboolean())) {
			return null;
		}
		if (value.isboolean()) {
			return 1L;
		}
		if (value.type() == LuaValue.TNUMBER) {
			return (long) value.todouble();
		}
		if (value.isstring()) {
			return bytesOf(value.checkstring());
		}
		if (value.istable()) {
			LuaValue ok = value.get("ok");
			if (ok.isstring()) {
				return new StatusReply(ok.tojstring());
			}
			LuaValue err = value.get("err");
			if (err.isstring()) {
				return new ErrorReply(err.tojstring());
			}
			List<Object> array = new ArrayList<>();
			for (int i = 1; !value.get(i).isnil(); i++) {
				array.add(reply(value.get(i)));
			}
			return array;
		}
		return null;
	}

	/** A reply as Redis hands it to Lua. */
	private static LuaValue lua(@Nullable Object reply) {
		if (reply == null) {
			return LuaValue.FALSE;
		}
		if (reply instanceof Long number) {
			return LuaValue.valueOf(number);
		}
		if (reply instanceof byte[] bytes) {
			return LuaString.valueOf(bytes);
		}
		if (reply instanceof StatusReply status) {
			LuaTable table = new LuaTable();
			table.set("ok", status.text());
			return table;
		}
		if (reply instanceof ErrorReply error) {
			LuaTable table = new LuaTable();
			table.set("err", error.message());
			return table;
		}
		LuaTable table = new LuaTable();
		List<?> list = (List<?>) reply;
		for (int i = 0; i < list.size(); i++) {
			table.set(i + 1, lua(list.get(i)));
		}
		return table;
	}

	private static byte[] bytesOf(LuaString string) {
		byte[] bytes = new byte[string.m_length];
		System.arraycopy(string.m_bytes, string.m_offset, bytes, 0, string.m_length);
		return bytes;
	}

	private static String sha1(byte[] source) {
		try {
			return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(source));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * {@code redis.status_reply} and {@code redis.error_reply}: a table with its argument
	 * under {@code ok} or {@code err}, the form a script returns a status or an error in.
	 */
	private static final class ReplyTable extends VarArgFunction {

		private final String field;

		ReplyTable(String field) {
			this.field = field;
		}

		@Override
		public Varargs invoke(Varargs args) {
			LuaTable reply = new LuaTable();
			reply.set(this.field, args.arg1());
			return reply;
		}

	}

	/**
	 * {@code string.format} with 64-bit integers, as Redis's Lua has: LuaJ's own
	 * {@code %d} takes 32 bits.
	 */
	private static final class Format extends VarArgFunction {

		private static final Pattern SPEC = Pattern.compile("%[-+ #0]*\\d*(?:\\.\\d+)?([a-zA-Z%])");

		@Override
		public Varargs invoke(Varargs args) {
			String format = args.checkjstring(1);
			Matcher spec = SPEC.matcher(format);
			StringBuilder out = new StringBuilder();
			int next = 2;
			int at = 0;
			while (spec.find()) {
				out.append(format, at, spec.start());
				at = spec.end();
				String flags = spec.group().substring(0, spec.group().length() - 1);
				char conversion = spec.group(1).charAt(0);
				switch (conversion) {
					case '%' -> out.append('%');
					case 'd', 'i' ->
						out.append(String.format(Locale.ROOT, flags + "d", (long) args.checkdouble(next++)));
					case 'x', 'X', 'o' ->
						out.append(String.format(Locale.ROOT, flags + conversion, (long) args.checkdouble(next++)));
					case 'c' -> out.append((char) args.checkint(next++));
					case 'e', 'E', 'f', 'g', 'G' ->
						out.append(String.format(Locale.ROOT, flags + conversion, args.checkdouble(next++)));
					default -> out.append(args.arg(next++).tojstring());
				}
			}
			out.append(format.substring(at));
			return LuaValue.valueOf(out.toString());
		}

	}

	/** {@code redis.call} (an error reply raises a Lua error) or {@code redis.pcall}. */
	private final class Call extends VarArgFunction {

		private final boolean protectedCall;

		Call(boolean protectedCall) {
			this.protectedCall = protectedCall;
		}

		@Override
		public Varargs invoke(Varargs args) {
			List<byte[]> command = new ArrayList<>();
			for (int i = 1; i <= args.narg(); i++) {
				LuaValue arg = args.arg(i);
				if (arg.type() == LuaValue.TNUMBER) {
					double number = arg.todouble();
					command.add(InProcessKeyspace.bytes((number == Math.rint(number) && Math.abs(number) < 1e17)
							? Long.toString((long) number) : Double.toString(number)));
				}
				else if (arg.isstring()) {
					command.add(bytesOf(arg.checkstring()));
				}
				else {
					return refuse("ERR Lua redis lib command arguments must be strings or integers");
				}
			}
			if (command.isEmpty()) {
				return refuse("ERR Please specify at least one argument for this redis lib call");
			}
			String name = InProcessKeyspace.text(command.get(0)).toLowerCase(Locale.ROOT);
			if (name.equals("eval") || name.equals("evalsha") || name.equals("script")) {
				return refuse("ERR This Redis command is not allowed from script");
			}
			Object reply = InProcessLua.this.keyspace.execute(command);
			if (reply instanceof ErrorReply error && !this.protectedCall) {
				throw new LuaError(error.message());
			}
			return lua(reply);
		}

		private Varargs refuse(String message) {
			if (this.protectedCall) {
				return lua(new ErrorReply(message));
			}
			throw new LuaError(message);
		}

	}

}
