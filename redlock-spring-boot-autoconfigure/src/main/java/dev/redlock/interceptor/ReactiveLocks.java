package dev.redlock.interceptor;

import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import dev.redlock.annotation.OnLocked;
import dev.redlock.core.LockNotAcquiredException;

/**
 * Locks around reactive return types ({@code Mono}, {@code Flux} and whatever else
 * Spring's {@link ReactiveAdapterRegistry} adapts): the lock is acquired when the result
 * is subscribed to, not when the method is called, and released when it completes, fails
 * or is cancelled. Acquisition and release block on the nodes, so they run on Reactor's
 * bounded elastic scheduler, never on the subscriber's thread. The subscription carries
 * the leases in its context ({@link ReactiveLockContext}). Loaded only when Reactor is on
 * the classpath.
 */
final class ReactiveLocks {

	private static final ReactiveAdapterRegistry registry = ReactiveAdapterRegistry.getSharedInstance();

	private ReactiveLocks() {
	}

	/**
	 * Whether a return type is reactive and adaptable.
	 * @param type the method's return type
	 * @return {@code true} if locks can follow its subscriptions
	 */
	static boolean supports(Class<?> type) {
		return registry.getAdapter(type) != null;
	}

	/**
	 * Wraps the method's result so that each subscription holds the locks while it runs.
	 * @param result what the method returned (it only assembled the work)
	 * @param returnType the method's declared return type
	 * @param calls a new call (with its observation) for each subscription
	 * @param resources the resources to lock, in canonical order
	 * @param target the bean, for a fallback
	 * @param args the arguments, for a fallback
	 * @return a value of the method's return type
	 */
	static @Nullable Object lock(@Nullable Object result, Class<?> returnType, Supplier<LockedCall> calls,
			List<String> resources, Object target, Object[] args) {
		ReactiveAdapter adapter = registry.getAdapter(returnType, result);
		if (adapter == null || result == null) {
			return result;
		}
		Publisher<?> source = adapter.toPublisher(result);
		Flux<Object> locked = Flux.defer(() -> {
			LockedCall call = calls.get();
			call.leaveScope();
			return Mono.fromCallable(() -> acquire(call, resources))
				.subscribeOn(Schedulers.boundedElastic())
				// cancelled while acquiring: the locks arrive after nobody wants them, so
				// release them at once
				.doOnDiscard(Optional.class, (outcome) -> {
					if (outcome.isEmpty()) {
						call.finishQuietly(null);
					}
				})
				.flatMapMany((failure) -> failure.isPresent() ? whenLocked(call, failure.get(), target, args)
						: Flux.usingWhen(Mono.just(call),
								(held) -> Flux.from(source)
									.contextWrite((context) -> ReactiveLockContext.with(context, held.acquired())),
								(held) -> finish(held, null), (held, error) -> finish(held, error),
								(held) -> finish(held, null)));
		});
		return adapter.fromPublisher(locked);
	}

	/**
	 * Acquires; a refusal is returned, not thrown, so the strategy for it can choose what
	 * to emit.
	 */
	private static Optional<LockNotAcquiredException> acquire(LockedCall call, List<String> resources) {
		try {
			call.acquireAll(resources);
			return Optional.empty();
		}
		catch (LockNotAcquiredException ex) {
			return Optional.of(ex);
		}
	}

	private static Flux<Object> whenLocked(LockedCall call, LockNotAcquiredException failure, Object target,
			Object[] args) {
		Object value;
		try {
			value = call.whenLocked(failure, target, args);
		}
		catch (Throwable ex) {
			return Flux.error(ex);
		}
		if (call.onLocked() == OnLocked.SKIP || value == null) {
			return Flux.empty();
		}
		ReactiveAdapter adapter = registry.getAdapter(value.getClass(), value);
		return (adapter != null) ? Flux.from(adapter.toPublisher(value)) : Flux.just(value);
	}

	private static Mono<Void> finish(LockedCall call, @Nullable Throwable error) {
		return Mono.<Void>fromRunnable(() -> call.finishQuietly(error)).subscribeOn(Schedulers.boundedElastic());
	}

}
