package dev.redlock.core;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Runs test code on a platform or a virtual thread. The build targets Java 17, so virtual
 * threads (Java 21) are reached through reflection; tests that use them run on JDK 21 and
 * later ({@code .ci/run} runs them on JDK 25).
 */
final class TestThreads {

	private TestThreads() {
	}

	/**
	 * The kinds of thread this JDK has, for {@code @MethodSource}: platform
	 * ({@code false}) always, virtual ({@code true}) from JDK 21 on. A test parameterized
	 * by it has no virtual-thread case before 21, rather than a skipped one.
	 */
	static Stream<Boolean> kinds() {
		return (Runtime.version().feature() >= 21) ? Stream.of(false, true) : Stream.of(false);
	}

	/** Starts the task on a new thread and returns the thread and its result. */
	static <T> Running<T> start(boolean virtual, Callable<T> task) {
		CompletableFuture<T> result = new CompletableFuture<>();
		Runnable body = () -> {
			try {
				result.complete(task.call());
			}
			catch (Throwable ex) {
				result.completeExceptionally(ex);
			}
		};
		Thread thread = virtual ? startVirtual(body) : new Thread(body, "test-platform-thread");
		if (!virtual) {
			thread.start();
		}
		return new Running<>(thread, result);
	}

	private static Thread startVirtual(Runnable body) {
		try {
			Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
			Method start = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
			return (Thread) start.invoke(builder, body);
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException(
					"virtual threads need JDK 21 or later, this is " + System.getProperty("java.version"), ex);
		}
	}

	record Running<T>(Thread thread, CompletableFuture<T> result) {

		T await(Duration timeout) throws Exception {
			return this.result.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
		}

		boolean isDone() {
			return this.result.isDone();
		}

	}

}
