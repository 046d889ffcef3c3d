package dev.redlock.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

class RespTests {

	private static Object read(String wire) throws IOException {
		return Resp.read(new ByteArrayInputStream(wire.getBytes(StandardCharsets.UTF_8)));
	}

	@Test
	void encodesCommandsAsArraysOfBulkStrings() {
		assertThat(new String(Resp.encode("SET", "k", "", "é"), StandardCharsets.UTF_8))
			.isEqualTo("*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n$2\r\né\r\n");
	}

	@Test
	void decodesEveryRespTwoType() throws IOException {
		assertThat(read("+OK\r\n")).isEqualTo("OK");
		assertThat(read(":-42\r\n")).isEqualTo(-42L);
		assertThat(read("$5\r\nhe\r\no\r\n")).isEqualTo("he\r\no");
		assertThat(read("$0\r\n\r\n")).isEqualTo("");
		assertThat(read("$-1\r\n")).isNull();
		assertThat(read("*-1\r\n")).isNull();
		assertThat(read("-ERR bad\r\n")).isEqualTo(new Resp.ErrorReply("ERR bad"));
		assertThat(read("*3\r\n:1\r\n$-1\r\n*1\r\n+x\r\n")).isEqualTo(Arrays.asList(1L, null, List.of("x")));
	}

	@Test
	void rendersRepliesAsText() {
		assertThat(Resp.render("OK")).isEqualTo("OK");
		assertThat(Resp.render(7L)).isEqualTo("7");
		assertThat(Resp.render(null)).isNull();
		assertThat(Resp.render(List.of())).isEmpty();
		assertThat(Resp.render(Arrays.asList("a", null, 3L, new Resp.ErrorReply("ERR x"))))
			.isEqualTo("a\nnull\n3\nERR x");
		assertThatThrownBy(() -> Resp.render(new Resp.ErrorReply("WRONGTYPE nope")))
			.isInstanceOf(IllegalStateException.class)
			.hasMessage("WRONGTYPE nope");
	}

	@Test
	void rejectsTruncatedOrUnknownInput() {
		assertThatThrownBy(() -> read("")).isInstanceOf(EOFException.class);
		assertThatThrownBy(() -> read("$5\r\nab")).isInstanceOf(EOFException.class);
		assertThatThrownBy(() -> read("?what\r\n")).isInstanceOf(IOException.class);
	}

}
