package dev.redlock.core.internal.protocol;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * Reads the {@code field:value} lines of an {@code INFO} reply.
 */
public final class InfoReply {

	private InfoReply() {
	}

	public static Map<String, String> parse(byte[] reply) {
		Map<String, String> fields = new HashMap<>();
		for (String line : new String(reply, StandardCharsets.UTF_8).split("\r?\n")) {
			int colon = line.indexOf(':');
			if (colon > 0 && !line.startsWith("#")) {
				fields.put(line.substring(0, colon), line.substring(colon + 1).trim());
			}
		}
		return fields;
	}

}
