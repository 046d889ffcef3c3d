package dev.redlock.interceptor;

import java.lang.reflect.Array;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NavigableSet;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * What a skipped call returns: "nothing" in the method's return type.
 */
final class EmptyValues {

	private EmptyValues() {
	}

	/**
	 * Returns the empty value of a return type: {@code null} for {@code void} and for
	 * types without an empty value, else an empty {@code Optional}, collection, map,
	 * stream or array, or a completed future of {@code null}.
	 * @param type the method's return type, not a primitive other than {@code void}
	 * @return the empty value
	 */
	static @Nullable Object of(Class<?> type) {
		if (type == void.class || type == Void.class) {
			return null;
		}
		if (type == Optional.class) {
			return Optional.empty();
		}
		if (type == OptionalInt.class) {
			return OptionalInt.empty();
		}
		if (type == OptionalLong.class) {
			return OptionalLong.empty();
		}
		if (type == OptionalDouble.class) {
			return OptionalDouble.empty();
		}
		if (type.isArray()) {
			return Array.newInstance(type.getComponentType(), 0);
		}
		if (type.isAssignableFrom(CompletableFuture.class) || type == CompletionStage.class) {
			return CompletableFuture.completedFuture(null);
		}
		if (type == Stream.class) {
			return Stream.empty();
		}
		return emptyCollection(type);
	}

	private static @Nullable Object emptyCollection(Class<?> type) {
		if (type == List.class || type == Collection.class || type == Iterable.class) {
			return List.of();
		}
		if (type == Set.class) {
			return Set.of();
		}
		if (type == SortedSet.class || type == NavigableSet.class) {
			return Collections.emptyNavigableSet();
		}
		if (type == Map.class) {
			return Map.of();
		}
		if (type == SortedMap.class || type == NavigableMap.class) {
			return Collections.emptyNavigableMap();
		}
		return null;
	}

}
