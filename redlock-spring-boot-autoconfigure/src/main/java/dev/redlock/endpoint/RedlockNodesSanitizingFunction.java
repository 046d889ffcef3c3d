package dev.redlock.endpoint;

import java.util.Collection;
import java.util.Locale;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.boot.actuate.endpoint.SanitizableData;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;

/**
 * Masks the user information of {@code redlock.nodes} values
 * ({@code redis://user:password@host:port}) wherever Actuator shows property values
 * ({@code env}, {@code configprops}), even with {@code show-values=always}. The scheme,
 * host, port and database stay visible: {@code redis://******@10.0.0.5:6379/2}.
 *
 * <p>
 * Applies to {@code redlock.nodes}, its elements ({@code redlock.nodes[0]}) and their
 * environment variable forms ({@code REDLOCK_NODES}, {@code REDLOCK_NODES_0_}); a value
 * may hold several comma-separated URIs.
 */
public class RedlockNodesSanitizingFunction implements SanitizingFunction {

	/** What replaces the user information. */
	public static final String MASK = "******";

	private static final String PROPERTY = "redlock.nodes";

	/**
	 * The user information of each URI: everything after {@code ://} up to the last
	 * {@code @} before the next comma or blank, so that a password holding {@code @} or
	 * {@code /} is masked whole.
	 */
	private static final Pattern USER_INFO = Pattern.compile("(?<=://)[^,\\s]*@");

	@Override
	public Predicate<SanitizableData> filter() {
		return (data) -> isNodesKey(data.getKey());
	}

	@Override
	public SanitizableData apply(SanitizableData data) {
		Object value = data.getValue();
		if (value == null) {
			return data;
		}
		if (value instanceof Collection<?> values) {
			return data.withValue(
					values.stream().map((element) -> (element != null) ? mask(element.toString()) : null).toList());
		}
		return data.withValue(mask(value.toString()));
	}

	/**
	 * Masks the user information of every Redis URI in a text.
	 * @param text a URI, or several separated by commas
	 * @return the text with each URI's user information replaced by {@value #MASK}
	 */
	static String mask(String text) {
		return USER_INFO.matcher(text).replaceAll(Matcher.quoteReplacement(MASK + "@"));
	}

	private static boolean isNodesKey(String key) {
		String normalized = key.toLowerCase(Locale.ROOT).replace('_', '.');
		if (!normalized.startsWith(PROPERTY)) {
			return false;
		}
		String rest = normalized.substring(PROPERTY.length());
		return rest.isEmpty() || rest.startsWith("[") || rest.startsWith(".");
	}

}
