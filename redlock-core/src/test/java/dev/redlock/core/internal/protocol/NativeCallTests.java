package dev.redlock.core.internal.protocol;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.exceptions.JedisDataException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * How calls of the lock scripts are written natively and their replies read back as the
 * scripts' (pure logic; {@code NativeCommandsTests} runs them on real servers).
 */
class NativeCallTests {

	private static final RawArgument KEY = RawArgument.of("redlock:k");

	private static final RawArgument VALUE = RawArgument.of("v1");

	@Test
	void findsOurScriptsByDigestAndBySourceOnly() {
		assertThat(NativeCall.of(LockScripts.call(Command.EVALSHA, LockScripts.RELEASE.sha1(), KEY, VALUE)))
			.isEqualTo(NativeCall.RELEASE);
		assertThat(NativeCall.of(LockScripts.call(Command.EVAL, LockScripts.DISCARD.source(), KEY, VALUE)))
			.isEqualTo(NativeCall.DISCARD);
		assertThat(NativeCall
			.of(LockScripts.call(Command.EVALSHA, LockScripts.EXTEND.sha1(), KEY, VALUE, RawArgument.of(500))))
			.isEqualTo(NativeCall.EXTEND);
		assertThat(NativeCall.of(LockScripts.call(Command.EVALSHA, LockScripts.RAISE_FENCE.sha1(), KEY, VALUE)))
			.isNull();
		assertThat(NativeCall.of(new CommandArguments(Command.GET).add(KEY))).isNull();
		// an extension without its TTL is not one of ours
		assertThat(NativeCall.of(LockScripts.call(Command.EVALSHA, LockScripts.EXTEND.sha1(), KEY, VALUE))).isNull();
	}

	@Test
	void writesTheServersOwnCommands() {
		CommandArguments release = LockScripts.call(Command.EVALSHA, LockScripts.RELEASE.sha1(), KEY, VALUE);
		assertThat(written(NativeCall.RELEASE, release, LockCommands.DELEX)).containsExactly("DELEX redlock:k IFEQ v1",
				"PUBLISH redlock-released:redlock:k v1");
		assertThat(written(NativeCall.RELEASE, release, LockCommands.DELIFEQ)).containsExactly("DELIFEQ redlock:k v1",
				"PUBLISH redlock-released:redlock:k v1");
		CommandArguments extend = LockScripts.call(Command.EVALSHA, LockScripts.EXTEND.sha1(), KEY, VALUE,
				RawArgument.of(500));
		assertThat(written(NativeCall.EXTEND, extend, LockCommands.DELIFEQ))
			.containsExactly("SET redlock:k v1 IFEQ v1 GET PX 500");
	}

	@Test
	void readsTheRepliesAsTheScriptsWould() {
		assertThat(NativeCall.EXTEND.fold(VALUE, "v1".getBytes(), null)).isEqualTo(1L);
		assertThat(NativeCall.EXTEND.fold(VALUE, null, null)).isEqualTo(0L);
		assertThat(NativeCall.EXTEND.fold(VALUE, "v2".getBytes(), null)).isEqualTo(-1L);
		assertThat(NativeCall.RELEASE.fold(VALUE, 1L, 3L)).isEqualTo(4L);
		assertThat(NativeCall.RELEASE.fold(VALUE, 1L, new JedisDataException("NOPERM no channel"))).isEqualTo(1L);
		assertThat(NativeCall.RELEASE.fold(VALUE, 0L, 3L)).isEqualTo(0L);
		assertThat(NativeCall.DISCARD.fold(VALUE, 1L, null)).isEqualTo(1L);
	}

	@Test
	void aCommandTheServerRefusesGoesAgainAsAScriptAnyOtherErrorStays() {
		for (String refusal : List.of("ERR unknown command 'delex', with args beginning with: 'k'", "ERR syntax error",
				"NOPERM User locker has no permissions to run the 'delifeq' command",
				"ERR wrong number of arguments for 'set' command")) {
			assertThatExceptionOfType(NativeCall.NativeCommandRefusedException.class)
				.isThrownBy(() -> NativeCall.DISCARD.fold(VALUE, new JedisDataException(refusal), null));
		}
		JedisDataException wrongType = new JedisDataException(
				"WRONGTYPE Operation against a key holding the wrong kind of value");
		assertThatExceptionOfType(JedisDataException.class)
			.isThrownBy(() -> NativeCall.EXTEND.fold(VALUE, wrongType, null))
			.isSameAs(wrongType);
	}

	private static List<String> written(NativeCall call, CommandArguments script, LockCommands commands) {
		List<String> written = new ArrayList<>();
		for (CommandArguments command : call.commands(script, commands)) {
			StringBuilder text = new StringBuilder();
			command.forEach(
					(argument) -> text.append((text.length() > 0) ? " " : "").append(new String(argument.getRaw())));
			written.add(text.toString());
		}
		assertThat(new NativeForm(script).commands(commands)).hasSize(written.size());
		return written;
	}

}
