package dev.redlock.interceptor;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringValueResolver;

import dev.redlock.annotation.DistributedLock;
import dev.redlock.annotation.Renewal;

/**
 * Finds {@link DistributedLock @DistributedLock} on a method and resolves its attributes once per method and target
 * class. Invalid attributes are reported with the method and attribute at fault.
 */
public final class LockAttributeSource {

	private static final Set<String> REACTIVE_TYPES = Set.of("org.reactivestreams.Publisher",
			"java.util.concurrent.Flow$Publisher", "kotlinx.coroutines.flow.Flow");

	private final Map<MethodClassKey, Optional<LockAttributes>> cache = new ConcurrentHashMap<>();

	private final SpelExpressionParser parser = new SpelExpressionParser();

	private final StringValueResolver placeholders;

	/**
	 * Creates a source.
	 * @param placeholders resolves {@code ${…}} placeholders in {@code ttl}, {@code waitTime} and {@code maxHold}, failing on
	 * unresolvable ones
	 */
	public LockAttributeSource(StringValueResolver placeholders) {
		this.placeholders = placeholders;
	}

	/**
	 * Returns the attributes of a method, if it is annotated.
	 * @param method the invoked method, possibly an interface method
	 * @param targetClass the class of the target, or {@code null} if unknown
	 * @return the attributes, or {@code null} if the method carries no {@code @DistributedLock}
	 * @throws IllegalStateException if an attribute is invalid
	 */
	public @Nullable LockAttributes find(Method method, @Nullable Class<?> targetClass) {
		MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
		Optional<LockAttributes> cached = this.cache.get(cacheKey);
		if (cached == null) {
			cached = Optional.ofNullable(resolve(method, targetClass));
			this.cache.put(cacheKey, cached);
		}
		return cached.orElse(null);
	}

	private @Nullable LockAttributes resolve(Method method, @Nullable Class<?> targetClass) {
		Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
		DistributedLock annotation = AnnotatedElementUtils.findMergedAnnotation(specific, DistributedLock.class);
		if (annotation == null && specific != method) {
			annotation = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class);
		}
		if (annotation == null) {
			return null;
		}
		Class<?> owner = (targetClass != null) ? targetClass : specific.getDeclaringClass();
		String description = owner.getSimpleName() + "." + specific.getName() + Arrays.stream(specific.getParameterTypes())
			.map(Class::getSimpleName)
			.collect(Collectors.joining(", ", "(", ")"));
		if (isAsynchronous(specific.getReturnType())) {
			throw new IllegalStateException("Invalid @DistributedLock on " + description + ": it returns "
					+ specific.getReturnType().getSimpleName() + ", so the lock would be released when the method "
					+ "returns, before the asynchronous work is done; asynchronous return types are not supported yet");
		}
		String name = annotation.name().isBlank() ? owner.getSimpleName() + "." + specific.getName()
				: annotation.name().trim();
		Expression key = parseKey(annotation.key(), description);
		Duration ttl = parseDuration("ttl", annotation.ttl(), description);
		if (ttl != null && (ttl.isZero() || ttl.isNegative() || ttl.toMillis() < 1)) {
			throw invalid(description, "ttl", annotation.ttl(), "must be at least 1 ms");
		}
		Duration waitTime = parseDuration("waitTime", annotation.waitTime(), description);
		if (waitTime != null && waitTime.isNegative()) {
			throw invalid(description, "waitTime", annotation.waitTime(), "must not be negative");
		}
		Duration maxHold = parseDuration("maxHold", annotation.maxHold(), description);
		if (maxHold != null && (maxHold.isZero() || maxHold.isNegative())) {
			throw invalid(description, "maxHold", annotation.maxHold(), "must be positive");
		}
		if (maxHold != null && annotation.autoRenew() == Renewal.OFF) {
			throw invalid(description, "maxHold", annotation.maxHold(),
					"has no effect with autoRenew = OFF; remove it or turn renewal on");
		}
		Boolean autoRenew = switch (annotation.autoRenew()) {
			case ON -> Boolean.TRUE;
			case OFF -> Boolean.FALSE;
			case DEFAULT -> null;
		};
		return new LockAttributes(name, key, annotation.key(), ttl, waitTime, specific, description, autoRenew,
				maxHold, annotation.onLeaseLost());
	}

	private static boolean isAsynchronous(Class<?> returnType) {
		if (Future.class.isAssignableFrom(returnType) || CompletionStage.class.isAssignableFrom(returnType)) {
			return true;
		}
		// reactive types, recognised by name so that no reactive library is needed on the classpath
		for (Class<?> type : ClassUtils.getAllInterfacesForClassAsSet(returnType)) {
			if (REACTIVE_TYPES.contains(type.getName())) {
				return true;
			}
		}
		return REACTIVE_TYPES.contains(returnType.getName());
	}

	private @Nullable Expression parseKey(String source, String description) {
		if (source.isBlank()) {
			return null;
		}
		try {
			return this.parser.parseExpression(source);
		}
		catch (ParseException ex) {
			throw invalid(description, "key", source, "is not a valid SpEL expression (" + ex.getMessage() + ")");
		}
	}

	private @Nullable Duration parseDuration(String attribute, String source, String description) {
		if (source.isBlank()) {
			return null;
		}
		String resolved;
		try {
			resolved = this.placeholders.resolveStringValue(source);
		}
		catch (IllegalArgumentException ex) {
			throw invalid(description, attribute, source, "has a placeholder that cannot be resolved (" + ex.getMessage() + ")");
		}
		if (resolved == null || resolved.isBlank()) {
			throw invalid(description, attribute, source, "resolves to an empty value");
		}
		try {
			return DurationStyle.detectAndParse(resolved.trim());
		}
		catch (IllegalArgumentException ex) {
			String shown = resolved.equals(source) ? "" : " (resolved to '" + resolved + "')";
			throw invalid(description, attribute, source,
					"is not a duration" + shown + "; write e.g. 500ms, 10s, 2m or PT1M");
		}
	}

	private static IllegalStateException invalid(String description, String attribute, String value, String problem) {
		return new IllegalStateException("Invalid @DistributedLock on " + description + ": attribute '" + attribute
				+ "' = \"" + value + "\" " + problem);
	}

}
