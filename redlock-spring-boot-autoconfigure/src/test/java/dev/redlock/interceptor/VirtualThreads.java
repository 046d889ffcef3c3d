package dev.redlock.interceptor;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Virtual threads for tests compiled for Java 17: the Java 21 API is reached through
 * reflection, so these methods work only on a JDK 21 or later. Tests that use them carry
 * {@code @EnabledForJreRange(min = JRE.JAVA_21)}.
 */
public final class VirtualThreads {

	private VirtualThreads() {
	}

	/**
	 * Returns a factory of unstarted virtual threads named {@code prefix0},
	 * {@code prefix1}, ... ({@code Thread.ofVirtual().name(prefix, 0).factory()}).
	 * @param prefix the start of each thread's name
	 * @return the factory
	 */
	public static ThreadFactory factory(String prefix) {
		try {
			Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
			Class<?> ofVirtual = Class.forName("java.lang.Thread$Builder$OfVirtual");
			builder = ofVirtual.getMethod("name", String.class, long.class).invoke(builder, prefix, 0L);
			return (ThreadFactory) Class.forName("java.lang.Thread$Builder").getMethod("factory").invoke(builder);
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException("Virtual threads need Java 21 or later, this is " + Runtime.version(), ex);
		}
	}

	/**
	 * Returns an executor that runs each task on a new virtual thread
	 * ({@code Executors.newThreadPerTaskExecutor(factory(prefix))}); the caller shuts it
	 * down.
	 * @param prefix the start of each thread's name
	 * @return the executor
	 */
	public static ExecutorService newExecutor(String prefix) {
		try {
			return (ExecutorService) Executors.class.getMethod("newThreadPerTaskExecutor", ThreadFactory.class)
				.invoke(null, factory(prefix));
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException("Virtual threads need Java 21 or later, this is " + Runtime.version(), ex);
		}
	}

	/**
	 * Returns whether a thread is virtual ({@code Thread.isVirtual()}).
	 * @param thread the thread
	 * @return {@code true} for a virtual thread
	 */
	public static boolean isVirtual(Thread thread) {
		try {
			return (Boolean) Thread.class.getMethod("isVirtual").invoke(thread);
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException("Virtual threads need Java 21 or later, this is " + Runtime.version(), ex);
		}
	}

	/**
	 * Runs a task on a new virtual thread and waits for it, at most 30 s.
	 * @param name the thread's name (followed by {@code 0})
	 * @param task the task
	 * @param <T> the task's result type
	 * @return what the task returned
	 * @throws Exception what the task threw, as it was thrown (errors too)
	 */
	public static <T> T call(String name, Callable<T> task) throws Exception {
		FutureTask<T> future = new FutureTask<>(task);
		Thread thread = factory(name).newThread(future);
		thread.start();
		try {
			return future.get(30, TimeUnit.SECONDS);
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof Exception cause) {
				throw cause;
			}
			if (ex.getCause() instanceof Error error) {
				throw error;
			}
			throw ex;
		}
		catch (TimeoutException ex) {
			thread.interrupt();
			throw new AssertionError("virtual thread " + thread + " did not finish within 30 s", ex);
		}
	}

	/**
	 * Opens the gate the tasks wait at and asserts that each task returns {@code true}
	 * (it ran on a virtual thread) within the timeout.
	 * @param gate what every task awaits before its work
	 * @param tasks the submitted tasks
	 * @param timeout how long to wait for each task
	 * @param description what a task's {@code true} means, for the failure message
	 * @return the milliseconds from the opening of the gate until every task returned
	 * @throws Exception what waiting for a task threw
	 */
	public static long openAndAwait(CountDownLatch gate, List<Future<Boolean>> tasks, Duration timeout,
			String description) throws Exception {
		long began = System.nanoTime();
		gate.countDown();
		for (Future<Boolean> task : tasks) {
			assertThat(task.get(timeout.toMillis(), TimeUnit.MILLISECONDS)).as(description).isTrue();
		}
		return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
	}

}
