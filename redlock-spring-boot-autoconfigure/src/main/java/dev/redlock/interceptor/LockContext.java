package dev.redlock.interceptor;

import java.util.Optional;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.Lease;

/**
 * The lease of the {@link dev.redlock.annotation.DistributedLock @DistributedLock} method running on the current
 * thread.
 *
 * <pre>{@code
 * @DistributedLock(key = "'report:' + #day", ttl = "30s", autoRenew = Renewal.ON)
 * public void build(LocalDate day) {
 *     Lease lease = LockContext.currentLease().orElseThrow();
 *     for (Part part : parts(day)) {
 *         if (lease.isLost()) {
 *             throw new IllegalStateException("lock lost, stopping");
 *         }
 *         write(part);
 *     }
 * }
 * }</pre>
 *
 * <p>The context is a thread-local set for the duration of the call, on the calling thread only. The {@link Lease}
 * itself is not tied to a thread: pass it to other threads, virtual threads or asynchronous tasks, where
 * {@link Lease#isLost()}, {@link Lease#remainingValidity()} and {@link Lease#onLost(Runnable)} work as on the
 * calling thread. Nested annotated calls see their own lease, and the outer one again when they return.
 */
public final class LockContext {

	private static final ThreadLocal<Lease> current = new ThreadLocal<>();

	private LockContext() {
	}

	/**
	 * Returns the lease held for the {@code @DistributedLock} method running on this thread.
	 * @return the lease, or empty outside such a method
	 */
	public static Optional<Lease> currentLease() {
		return Optional.ofNullable(current.get());
	}

	/**
	 * Makes a lease current.
	 * @return the lease that was current before, to restore with {@link #restore}
	 */
	static @Nullable Lease enter(Lease lease) {
		Lease previous = current.get();
		current.set(lease);
		return previous;
	}

	/** Restores the lease that was current before {@link #enter}. */
	static void restore(@Nullable Lease previous) {
		if (previous == null) {
			current.remove();
		}
		else {
			current.set(previous);
		}
	}

}
