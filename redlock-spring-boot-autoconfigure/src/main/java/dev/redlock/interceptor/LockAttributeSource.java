package dev.redlock.interceptor;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringValueResolver;

import dev.redlock.annotation.DistributedLock;
import dev.redlock.annotation.OnLocked;
import dev.redlock.annotation.Renewal;
import dev.redlock.core.RedlockSettings;

/**
 * Finds {@link DistributedLock @DistributedLock} on a method and resolves its attributes
 * once per method and target class. Invalid attributes are reported with the method and
 * attribute at fault.
 */
public final class LockAttributeSource {

	private static final Logger logger = LoggerFactory.getLogger(LockAttributeSource.class);

	private static final Set<String> REACTIVE_TYPES = Set.of("org.reactivestreams.Publisher",
			"java.util.concurrent.Flow$Publisher", "kotlinx.coroutines.flow.Flow");

	private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Flux",
			LockAttributeSource.class.getClassLoader());

	/**
	 * Whether Spring AOP can bridge a Kotlin {@code suspend} function to a {@code Mono}
	 * (it does so when kotlinx-coroutines-reactor is on the classpath).
	 */
	private static final boolean COROUTINES_REACTOR_PRESENT = ClassUtils.isPresent("kotlinx.coroutines.reactor.MonoKt",
			LockAttributeSource.class.getClassLoader());

	private final Map<MethodClassKey, Optional<LockAttributes>> cache = new ConcurrentHashMap<>();

	private final SpelExpressionParser parser = new SpelExpressionParser();

	private final StringValueResolver placeholders;

	/**
	 * The settings every resolved method is checked against, once known; methods resolved
	 * before are checked when they are set.
	 */
	private volatile @Nullable RedlockSettings settings;

	/**
	 * Creates a source.
	 * @param placeholders resolves {@code ${…}} placeholders in {@code ttl},
	 * {@code waitTime} and {@code maxHold}, failing on unresolvable ones
	 */
	public LockAttributeSource(StringValueResolver placeholders) {
		this.placeholders = placeholders;
	}

	/**
	 * Returns the attributes of a method, if it is annotated.
	 * @param method the invoked method, possibly an interface method
	 * @param targetClass the class of the target, or {@code null} if unknown
	 * @return the attributes, or {@code null} if the method carries no
	 * {@code @DistributedLock}
	 * @throws IllegalStateException if an attribute is invalid
	 */
	public @Nullable LockAttributes find(Method method, @Nullable Class<?> targetClass) {
		MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
		Optional<LockAttributes> cached = this.cache.get(cacheKey);
		if (cached == null) {
			LockAttributes resolved = resolve(method, targetClass);
			RedlockSettings known = this.settings;
			if (resolved != null && known != null) {
				check(resolved, known);
			}
			cached = Optional.ofNullable(resolved);
			this.cache.put(cacheKey, cached);
		}
		return cached.orElse(null);
	}

	/**
	 * Checks the methods resolved so far against the settings of the {@code Redlock} that
	 * serves them (their {@code ttl} must leave validity after the clock drift allowance,
	 * their {@code minHold} may not outlast the restart quarantine), and the methods
	 * resolved from now on as they are. A {@code ttl} beyond the restart quarantine is
	 * logged once: it is served by renewal.
	 * @param settings the settings
	 * @throws IllegalStateException naming the first method whose attributes conflict
	 * with the settings
	 */
	public void checkAgainst(RedlockSettings settings) {
		for (Optional<LockAttributes> resolved : this.cache.values()) {
			resolved.ifPresent((attributes) -> check(attributes, settings));
		}
		this.settings = settings;
	}

	private static void check(LockAttributes attributes, RedlockSettings settings) {
		LockTerms.verify(attributes, settings);
		String served = LockTerms.servedByRenewal(attributes, settings);
		if (served != null) {
			logger.info(served);
		}
	}

	/**
	 * Returns whether a method carries {@code @DistributedLock}, without resolving its
	 * attributes: for ahead-of-time processing, where properties given only at runtime
	 * are missing.
	 * @param method the method, possibly an interface method
	 * @param targetClass the class of the target, or {@code null} if unknown
	 * @return {@code true} if annotated
	 */
	public boolean isAnnotated(Method method, @Nullable Class<?> targetClass) {
		return annotation(method, AopUtils.getMostSpecificMethod(method, targetClass)) != null;
	}

	private static @Nullable DistributedLock annotation(Method method, Method specific) {
		DistributedLock annotation = AnnotatedElementUtils.findMergedAnnotation(specific, DistributedLock.class);
		if (annotation == null && specific != method) {
			annotation = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class);
		}
		return annotation;
	}

	private @Nullable LockAttributes resolve(Method method, @Nullable Class<?> targetClass) {
		Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
		DistributedLock annotation = annotation(method, specific);
		if (annotation == null) {
			return null;
		}
		Class<?> owner = (targetClass != null) ? targetClass : specific.getDeclaringClass();
		String description = owner.getSimpleName() + "." + specific.getName()
				+ Arrays.stream(specific.getParameterTypes())
					.map(Class::getSimpleName)
					.collect(Collectors.joining(", ", "(", ")"));
		Class<?> returnType = specific.getReturnType();
		boolean suspending = KotlinDetector.isSuspendingFunction(specific);
		if (suspending && !COROUTINES_REACTOR_PRESENT) {
			throw new IllegalStateException("Invalid @DistributedLock on " + description + ": it is a Kotlin suspend "
					+ "function, which returns at its first suspension point, so the lock would be released before the "
					+ "coroutine is done; add org.jetbrains.kotlinx:kotlinx-coroutines-reactor, with which Spring "
					+ "runs it as a Mono whose completion releases the lock");
		}
		boolean asynchronous = !suspending && CompletionStage.class.isAssignableFrom(returnType);
		// Spring AOP runs a suspend function as a Mono: its subscription is locked like
		// any other
		boolean reactive = suspending || (!asynchronous && REACTOR_PRESENT && ReactiveLocks.supports(returnType));
		if (!asynchronous && !reactive && isUnsupportedAsynchronous(returnType)) {
			throw new IllegalStateException("Invalid @DistributedLock on " + description + ": it returns "
					+ returnType.getSimpleName() + ", whose completion cannot be followed, so the lock would be "
					+ "released before the asynchronous work is done; return a CompletableFuture or CompletionStage, "
					+ "or a Mono or Flux with Reactor on the classpath");
		}
		String name = annotation.name().isBlank() ? owner.getSimpleName() + "." + specific.getName()
				: annotation.name().trim();
		List<String> keySources = keySources(annotation, description);
		List<Expression> keys = new ArrayList<>(keySources.size());
		for (String source : keySources) {
			keys.add(parse((annotation.keys().length > 0) ? "keys" : "key", source, description));
		}
		Expression condition = annotation.condition().isBlank() ? null
				: parse("condition", annotation.condition(), description);
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
		Duration minHold = parseDuration("minHold", annotation.minHold(), description);
		if (minHold != null && minHold.isNegative()) {
			throw invalid(description, "minHold", annotation.minHold(), "must not be negative");
		}
		if (minHold != null && ttl != null && minHold.compareTo(ttl) > 0) {
			throw invalid(description, "minHold", annotation.minHold(), "is longer than the ttl (" + annotation.ttl()
					+ "): the lock cannot be kept longer than it lives; raise the ttl");
		}
		Boolean autoRenew = switch (annotation.autoRenew()) {
			case ON -> Boolean.TRUE;
			case OFF -> Boolean.FALSE;
			case DEFAULT -> null;
		};
		if (annotation.onLocked() == OnLocked.SKIP && returnType.isPrimitive() && returnType != void.class) {
			throw invalid(description, "onLocked", "SKIP", "cannot skip a method returning " + returnType.getName()
					+ ": there is no empty value of a primitive type; return its wrapper type, an Optional, or use "
					+ "FALLBACK");
		}
		Method fallback = fallback(annotation, specific, owner, description);
		return new LockAttributes(name, List.copyOf(keys), keySources, condition, annotation.condition(), ttl, waitTime,
				specific, description, autoRenew, maxHold, annotation.onLeaseLost(), annotation.onLocked(), fallback,
				minHold, asynchronous, reactive, annotation.fencing());
	}

	private static List<String> keySources(DistributedLock annotation, String description) {
		if (annotation.keys().length == 0) {
			return annotation.key().isBlank() ? List.of() : List.of(annotation.key());
		}
		if (!annotation.key().isBlank()) {
			throw invalid(description, "keys", String.join(", ", annotation.keys()),
					"is given together with 'key' = \"" + annotation.key() + "\"; use one of them");
		}
		for (String source : annotation.keys()) {
			if (source.isBlank()) {
				throw invalid(description, "keys", String.join(", ", annotation.keys()),
						"has an empty expression; every entry must name a resource");
			}
		}
		return List.of(annotation.keys());
	}

	/**
	 * Finds the fallback method: declared on the target class or a superclass, same
	 * parameter types, a return type the annotated method can return.
	 */
	private static @Nullable Method fallback(DistributedLock annotation, Method method, Class<?> owner,
			String description) {
		String name = annotation.fallback().trim();
		if (annotation.onLocked() != OnLocked.FALLBACK) {
			if (!name.isEmpty()) {
				throw invalid(description, "fallback", name, "is only used with onLocked = FALLBACK (onLocked is "
						+ annotation.onLocked() + "); remove it or set onLocked = FALLBACK");
			}
			return null;
		}
		if (name.isEmpty()) {
			throw invalid(description, "onLocked", "FALLBACK",
					"needs the name of the method to run instead in " + "'fallback'");
		}
		Method fallback = ReflectionUtils.findMethod(owner, name, method.getParameterTypes());
		if (fallback == null) {
			throw invalid(description, "fallback", name,
					"names no method " + name
							+ Arrays.stream(method.getParameterTypes())
								.map(Class::getSimpleName)
								.collect(Collectors.joining(", ", "(", ")"))
							+ " of " + owner.getSimpleName()
							+ ": a fallback takes the same parameter types as the locked method");
		}
		if (!ClassUtils.resolvePrimitiveIfNecessary(method.getReturnType())
			.isAssignableFrom(ClassUtils.resolvePrimitiveIfNecessary(fallback.getReturnType()))
				&& method.getReturnType() != void.class) {
			throw invalid(description, "fallback", name,
					"returns " + fallback.getReturnType().getSimpleName() + ", which " + method.getName()
							+ " cannot return (" + method.getReturnType().getSimpleName() + ")");
		}
		ReflectionUtils.makeAccessible(fallback);
		return fallback;
	}

	private static boolean isUnsupportedAsynchronous(Class<?> returnType) {
		if (Future.class.isAssignableFrom(returnType)) {
			return true;
		}
		// reactive types, recognised by name so that no reactive library is needed on the
		// classpath
		for (Class<?> type : ClassUtils.getAllInterfacesForClassAsSet(returnType)) {
			if (REACTIVE_TYPES.contains(type.getName())) {
				return true;
			}
		}
		return REACTIVE_TYPES.contains(returnType.getName());
	}

	private Expression parse(String attribute, String source, String description) {
		try {
			return this.parser.parseExpression(source);
		}
		catch (ParseException ex) {
			throw invalid(description, attribute, source, "is not a valid SpEL expression (" + ex.getMessage() + ")");
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
			throw invalid(description, attribute, source,
					"has a placeholder that cannot be resolved (" + ex.getMessage() + ")");
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
