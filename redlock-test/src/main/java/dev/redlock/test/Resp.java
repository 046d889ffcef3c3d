package dev.redlock.test;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * A minimal RESP2 client: one command per connection, used by the kit and its tests only.
 */
final class Resp {

	/** An error reply ({@code -ERR ...}) found nested inside an array reply. */
	record ErrorReply(String message) {
	}

	private Resp() {
	}

	/**
	 * Connects, sends one command, reads one reply and disconnects.
	 * @return a {@link String}, {@link Long}, {@code null}, {@link ErrorReply} or a
	 * {@link List} of those
	 * @throws UncheckedIOException when the server cannot be reached or does not answer
	 * within the timeout
	 */
	static @Nullable Object call(String host, int port, Duration timeout, String... args) {
		int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
		try (Socket socket = new Socket()) {
			socket.setTcpNoDelay(true);
			socket.connect(new InetSocketAddress(host, port), millis);
			socket.setSoTimeout(millis);
			OutputStream out = socket.getOutputStream();
			out.write(encode(args));
			out.flush();
			return read(new BufferedInputStream(socket.getInputStream()));
		}
		catch (IOException e) {
			throw new UncheckedIOException(
					"Redis at " + host + ":" + port + " did not answer " + String.join(" ", args) + ": " + e, e);
		}
	}

	/** Encodes a command as a RESP array of bulk strings. */
	static byte[] encode(String... args) {
		ByteArrayOutputStream buf = new ByteArrayOutputStream();
		writeAscii(buf, "*" + args.length + "\r\n");
		for (String arg : args) {
			byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
			writeAscii(buf, "$" + bytes.length + "\r\n");
			buf.writeBytes(bytes);
			writeAscii(buf, "\r\n");
		}
		return buf.toByteArray();
	}

	/** Reads one RESP2 reply; see {@link #call} for the types returned. */
	static @Nullable Object read(InputStream in) throws IOException {
		int type = in.read();
		if (type < 0) {
			throw new EOFException("connection closed before a reply");
		}
		String line = readLine(in);
		switch (type) {
			case '+':
				return line;
			case '-':
				return new ErrorReply(line);
			case ':':
				return Long.parseLong(line);
			case '$': {
				int len = Integer.parseInt(line);
				if (len < 0) {
					return null;
				}
				byte[] data = in.readNBytes(len);
				if (data.length < len) {
					throw new EOFException("truncated bulk string");
				}
				expectCrLf(in);
				return new String(data, StandardCharsets.UTF_8);
			}
			case '*': {
				int n = Integer.parseInt(line);
				if (n < 0) {
					return null;
				}
				List<@Nullable Object> items = new ArrayList<>(n);
				for (int i = 0; i < n; i++) {
					items.add(read(in));
				}
				return items;
			}
			default:
				throw new IOException("unexpected RESP type byte '" + (char) type + "' followed by: " + line);
		}
	}

	/**
	 * Renders a reply as text: strings as-is, integers in decimal, nil as {@code null},
	 * arrays joined with {@code "\n"} (nil elements as {@code "null"}, nested errors as
	 * their text).
	 * @throws IllegalStateException for a top-level error reply, with the error text as
	 * message
	 */
	static @Nullable String render(@Nullable Object reply) {
		if (reply instanceof ErrorReply error) {
			throw new IllegalStateException(error.message());
		}
		return renderNested(reply);
	}

	private static @Nullable String renderNested(@Nullable Object reply) {
		if (reply == null) {
			return null;
		}
		if (reply instanceof ErrorReply error) {
			return error.message();
		}
		if (reply instanceof List<?> list) {
			StringBuilder sb = new StringBuilder();
			for (int i = 0; i < list.size(); i++) {
				if (i > 0) {
					sb.append('\n');
				}
				sb.append(renderNested(list.get(i)));
			}
			return sb.toString();
		}
		return reply.toString();
	}

	private static String readLine(InputStream in) throws IOException {
		ByteArrayOutputStream buf = new ByteArrayOutputStream();
		while (true) {
			int b = in.read();
			if (b < 0) {
				throw new EOFException("connection closed inside a reply");
			}
			if (b == '\r') {
				int next = in.read();
				if (next != '\n') {
					throw new IOException("expected LF after CR");
				}
				return buf.toString(StandardCharsets.UTF_8);
			}
			buf.write(b);
		}
	}

	private static void expectCrLf(InputStream in) throws IOException {
		if (in.read() != '\r' || in.read() != '\n') {
			throw new IOException("expected CRLF after bulk string");
		}
	}

	private static void writeAscii(ByteArrayOutputStream buf, String s) {
		buf.writeBytes(s.getBytes(StandardCharsets.US_ASCII));
	}

}
