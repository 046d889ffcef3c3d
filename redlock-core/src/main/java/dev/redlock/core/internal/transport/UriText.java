package dev.redlock.core.internal.transport;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import redis.clients.jedis.HostAndPort;

/**
 * Reads the parts every node URI form shares: the user information (percent-decoded,
 * split into user and password), lists of {@code host[:port]}, the database path; and
 * refuses malformed text with the user information masked, so that no password reaches a
 * message. {@link RedisNodeUri} reads each form with them.
 */
final class UriText {

	private static final Pattern USER_INFO = Pattern.compile("(?<=://).*@");

	private UriText() {
	}

	/**
	 * The user and password of a URI's user information, each {@code null} when absent.
	 */
	static @Nullable String[] credentials(@Nullable String userInfo) {
		String user = null;
		String password = null;
		if (userInfo != null && !userInfo.isEmpty()) {
			int colon = userInfo.indexOf(':');
			if (colon < 0) {
				password = userInfo;
			}
			else {
				user = (colon > 0) ? userInfo.substring(0, colon) : null;
				password = userInfo.substring(colon + 1);
				if (password.isEmpty()) {
					password = null;
				}
			}
		}
		return new @Nullable String[] { user, password };
	}

	/**
	 * Decodes the percent-encoding of a URI's user information ({@code %40} for
	 * {@code @}); a {@code +} stays a {@code +}.
	 */
	static String decode(String text, String raw) {
		ByteArrayOutputStream bytes = new ByteArrayOutputStream(raw.length());
		int i = 0;
		while (i < raw.length()) {
			int percent = raw.indexOf('%', i);
			int plainEnd = (percent >= 0) ? percent : raw.length();
			byte[] plain = raw.substring(i, plainEnd).getBytes(StandardCharsets.UTF_8);
			bytes.write(plain, 0, plain.length);
			if (percent < 0) {
				break;
			}
			int value = (percent + 2 < raw.length()) ? hexByte(raw.charAt(percent + 1), raw.charAt(percent + 2)) : -1;
			if (value < 0) {
				throw invalid(text, "the user information has a malformed percent-encoding");
			}
			bytes.write(value);
			i = percent + 3;
		}
		return bytes.toString(StandardCharsets.UTF_8);
	}

	private static int hexByte(char high, char low) {
		int h = Character.digit(high, 16);
		int l = Character.digit(low, 16);
		return (h < 0 || l < 0) ? -1 : (h << 4) | l;
	}

	/**
	 * Parses a list of {@code host[:port]}, refusing one listed twice.
	 * @param what what the addresses are, for messages: {@code sentinel} or {@code seed}
	 */
	static List<HostAndPort> addresses(String text, String hosts, String what, int defaultPort) {
		List<HostAndPort> addresses = new ArrayList<>();
		for (String address : hosts.split(",", -1)) {
			HostAndPort parsed = address(text, address, what, defaultPort);
			if (addresses.contains(parsed)) {
				throw invalid(text, "the " + what + " " + SentinelGroup.format(parsed) + " is listed twice");
			}
			addresses.add(parsed);
		}
		return addresses;
	}

	private static HostAndPort address(String text, String address, String what, int defaultPort) {
		if (address.isBlank()) {
			throw invalid(text, "an empty " + what + " address in the list");
		}
		URI parsed;
		try {
			parsed = new URI("redis://" + address);
		}
		catch (URISyntaxException ex) {
			throw invalid(text, "the " + what + " address '" + address + "' is not host[:port]");
		}
		if (parsed.getHost() == null || parsed.getRawPath() != null && !parsed.getRawPath().isEmpty()) {
			throw invalid(text, "the " + what + " address '" + address + "' is not host[:port]");
		}
		int port = (parsed.getPort() != -1) ? parsed.getPort() : defaultPort;
		if (port < 1 || port > 65535) {
			throw invalid(text, "port must be between 1 and 65535");
		}
		String host = parsed.getHost();
		return new HostAndPort(host.startsWith("[") ? host.substring(1, host.length() - 1) : host, port);
	}

	/**
	 * The database index a URI's path gives, {@code 0} for none.
	 */
	static int database(String text, @Nullable String path) {
		if (path == null || path.isEmpty() || path.equals("/")) {
			return 0;
		}
		String digits = path.substring(1);
		if (!digits.chars().allMatch(Character::isDigit) || digits.length() > 9) {
			throw invalid(text, "the path must be a database index such as /0");
		}
		return Integer.parseInt(digits);
	}

	/** The error for a malformed URI, its user information masked. */
	static IllegalArgumentException invalid(String text, String reason) {
		return new IllegalArgumentException("Invalid Redis node URI '" + mask(text) + "': " + reason);
	}

	/**
	 * Masks the user information of a URI-like text, for messages about input that could
	 * not be parsed.
	 * @param text any text, usually a node URI
	 * @return the text with everything between {@code ://} and the last {@code @}
	 * replaced by {@code ****}
	 */
	static String mask(String text) {
		return USER_INFO.matcher(text).replaceFirst("****@");
	}

}
