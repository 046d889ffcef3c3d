package dev.redlock.interceptor;

/**
 * Observes each call of a {@link dev.redlock.annotation.DistributedLock @DistributedLock}
 * method, for tracing. The interceptor knows only this interface, so it loads no tracing
 * library when none is configured; the Micrometer Observation implementation lives in
 * {@code dev.redlock.autoconfigure.observation}.
 *
 * <p>
 * A failing observer is logged and otherwise ignored: it can never keep a method from
 * running under its lock, nor a lease from being released.
 */
@FunctionalInterface
public interface LockObserver {

	/** Observes nothing. */
	LockObserver NONE = (call) -> LockObservation.NONE;

	/**
	 * Starts observing one call, before the lock is acquired. Called on the calling
	 * thread, which runs the acquisition, the method and the release after it.
	 * @param call the method, its lock's name and the evaluated key
	 * @return the observation of this call
	 */
	LockObservation start(LockCall call);

}
