package dev.redlock.interceptor;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Callable;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.Lease;
import dev.redlock.core.Redlock;

/**
 * The locks held by the current logical call: the leases of the
 * {@link dev.redlock.annotation.DistributedLock @DistributedLock} methods running on this
 * thread, innermost first.
 *
 * <pre class="code">
 * &#64;DistributedLock(key = "'report:' + #day", ttl = "30s", autoRenew = Renewal.ON)
 * public void build(LocalDate day) {
 *     Lease lease = LockContext.currentLease().orElseThrow();
 *     for (Part part : parts(day)) {
 *         if (lease.isLost()) {
 *             throw new IllegalStateException("lock lost, stopping");
 *         }
 *         write(part);
 *     }
 * }
 * </pre>
 *
 * <p>
 * <strong>Reentrancy.</strong> An annotated call whose resource is already held by the
 * same logical call (on the same {@link Redlock}) joins that lease instead of acquiring
 * it again, which would wait for itself: it runs at once, and only the call that acquired
 * the lease releases it. The logical call is the thread the outer call runs on, platform
 * or virtual. <strong>Work handed to another thread is a different logical call</strong>:
 * an inner call there would wait for the outer lock like any other caller (and deadlock
 * if the outer call waits for that work). Hand the context over explicitly with
 * {@link #wrap(Runnable)} or {@link #wrap(Callable)}; a task that runs after the outer
 * lease was released or lost does not join it, but acquires the lock itself.
 *
 * <p>
 * The {@link Lease} itself is not tied to a thread: pass it to other threads, virtual
 * threads or asynchronous tasks, where {@link Lease#isLost()},
 * {@link Lease#remainingValidity()} and {@link Lease#onLost(Runnable)} work as on the
 * calling thread.
 */
public final class LockContext {

	private static final ThreadLocal<Frame> current = new ThreadLocal<>();

	private LockContext() {
	}

	/**
	 * Returns the lease of the innermost {@code @DistributedLock} call running on this
	 * thread (the first of its leases, in canonical order, for a call with several keys).
	 * @return the lease, or empty outside such a call
	 */
	public static Optional<Lease> currentLease() {
		Frame frame = current.get();
		return (frame != null && !frame.leases.isEmpty()) ? Optional.of(frame.leases.get(0)) : Optional.empty();
	}

	/**
	 * Returns the fencing token of the innermost {@code @DistributedLock(fencing = true)}
	 * call running on this thread.
	 * @return the token of {@link #currentLease()}, or empty outside such a call or for a
	 * lock without one
	 */
	public static OptionalLong fencingToken() {
		return currentLease().map(Lease::fencingToken).orElse(OptionalLong.empty());
	}

	/**
	 * Returns every lease the current logical call holds, innermost call first, each
	 * once.
	 * @return the leases; empty outside a {@code @DistributedLock} call
	 */
	public static List<Lease> heldLeases() {
		List<Lease> leases = new ArrayList<>();
		for (Frame frame = current.get(); frame != null; frame = frame.parent) {
			for (Lease lease : frame.leases) {
				if (!leases.contains(lease)) {
					leases.add(lease);
				}
			}
		}
		return leases;
	}

	/**
	 * Returns how many calls of the current logical call hold a lease: 1 for the call
	 * that acquired it, one more for each nested call that joined it.
	 * @param lease a lease
	 * @return the count; 0 when this logical call does not hold it
	 */
	public static int holdCount(Lease lease) {
		int count = 0;
		for (Frame frame = current.get(); frame != null; frame = frame.parent) {
			if (frame.leases.contains(lease)) {
				count++;
			}
		}
		return count;
	}

	/**
	 * Returns a task that runs with the locks this logical call holds now, so that an
	 * annotated call inside it joins them rather than waiting for them.
	 * @param task the task to hand to another thread
	 * @return the task, carrying the current context
	 */
	public static Runnable wrap(Runnable task) {
		Frame captured = current.get();
		return () -> {
			Frame previous = current.get();
			current.set(captured);
			try {
				task.run();
			}
			finally {
				restore(previous);
			}
		};
	}

	/**
	 * Returns a task that runs with the locks this logical call holds now; see
	 * {@link #wrap(Runnable)}.
	 * @param task the task to hand to another thread
	 * @param <T> the task's result type
	 * @return the task, carrying the current context
	 */
	public static <T> Callable<T> wrap(Callable<T> task) {
		Frame captured = current.get();
		return () -> {
			Frame previous = current.get();
			current.set(captured);
			try {
				return task.call();
			}
			finally {
				restore(previous);
			}
		};
	}

	/**
	 * Finds a lease this logical call holds on a resource and can join: acquired from the
	 * same {@link Redlock}, still valid.
	 */
	static @Nullable Lease joinable(Redlock redlock, String resource) {
		for (Frame frame = current.get(); frame != null; frame = frame.parent) {
			if (frame.redlock == redlock) {
				for (Lease lease : frame.leases) {
					if (lease.resource().equals(resource) && lease.isValid()) {
						return lease;
					}
				}
			}
		}
		return null;
	}

	/**
	 * Enters a call holding the given leases (acquired or joined); returns the frame to
	 * {@link #exit} with.
	 */
	static @Nullable Frame enter(Redlock redlock, List<Lease> leases) {
		Frame previous = current.get();
		current.set(new Frame(previous, redlock, leases));
		return previous;
	}

	/** Leaves a call, restoring the context it was entered in. */
	static void exit(@Nullable Frame previous) {
		restore(previous);
	}

	private static void restore(@Nullable Frame previous) {
		if (previous == null) {
			current.remove();
		}
		else {
			current.set(previous);
		}
	}

	/** One annotated call's leases, linked to the call it runs in. */
	static final class Frame {

		private final @Nullable Frame parent;

		private final Redlock redlock;

		private final List<Lease> leases;

		Frame(@Nullable Frame parent, Redlock redlock, List<Lease> leases) {
			this.parent = parent;
			this.redlock = redlock;
			this.leases = leases;
		}

	}

}
