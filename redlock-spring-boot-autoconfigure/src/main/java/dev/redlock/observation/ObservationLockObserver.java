package dev.redlock.observation;

import java.util.Locale;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.ReleaseOutcome;
import dev.redlock.interceptor.LockCall;
import dev.redlock.interceptor.LockObservation;
import dev.redlock.interceptor.LockObserver;

/**
 * Observes each {@link dev.redlock.annotation.DistributedLock @DistributedLock} call as
 * Micrometer Observations, so that a tracer turns them into spans:
 * <ul>
 * <li>{@value #LOCK} spans the whole call: acquisition, method and release. It is in
 * scope while the method runs, so the method's own observations and spans are its
 * children. Low-cardinality key {@code lock} (the lock name), high-cardinality key
 * {@code resource} (the evaluated key, which may carry personal or business data; left
 * out when the observer is created with {@code includeResource} off).</li>
 * <li>{@value #ACQUIRE}, its child: the acquisition, retries included. Keys {@code lock}
 * and {@code outcome} = {@code acquired} | {@code contended} | {@code no_quorum} |
 * {@code error}.</li>
 * <li>{@value #RELEASE}, its child: the release. Keys {@code lock} and {@code outcome} =
 * {@code released} | {@code expired} | {@code unknown} | {@code error}.</li>
 * </ul>
 * The names are not those of the listener's meters ({@code redlock.acquire}, ...) on
 * purpose: with Boot's metrics on, every observation also becomes a timer of its own
 * name, and two meters of one name with different tags would collide.
 * {@link Lease#extend()} and the programmatic {@link dev.redlock.core.Redlock} API are
 * not observed (the core has no Micrometer dependency); the listener's meters cover them.
 */
public final class ObservationLockObserver implements LockObserver {

	/** Name of the observation of a whole call. */
	public static final String LOCK = "redlock.lock";

	/** Name of the observation of the acquisition. */
	public static final String ACQUIRE = "redlock.lock.acquire";

	/** Name of the observation of the release. */
	public static final String RELEASE = "redlock.lock.release";

	private final ObservationRegistry registry;

	private final boolean includeResource;

	/**
	 * Creates an observer that reports to the given registry, with the evaluated key as
	 * the {@code resource} key value.
	 * @param registry the registry whose handlers receive the observations
	 */
	public ObservationLockObserver(ObservationRegistry registry) {
		this(registry, true);
	}

	/**
	 * Creates an observer that reports to the given registry.
	 * @param registry the registry whose handlers receive the observations
	 * @param includeResource whether the lock observation carries the evaluated key as
	 * its high-cardinality {@code resource} key value; off, spans never see the key
	 */
	public ObservationLockObserver(ObservationRegistry registry, boolean includeResource) {
		this.registry = registry;
		this.includeResource = includeResource;
	}

	@Override
	public LockObservation start(LockCall call) {
		Observation lock = Observation.createNotStarted(LOCK, this.registry)
			.lowCardinalityKeyValue("lock", call.name());
		if (this.includeResource) {
			lock.highCardinalityKeyValue("resource", call.resource());
		}
		lock.start();
		Observation.Scope scope = lock.openScope();
		Observation acquire = child(ACQUIRE, lock, call.name()).start();
		return new Call(call.name(), lock, scope, acquire);
	}

	private Observation child(String name, Observation parent, String lockName) {
		return Observation.createNotStarted(name, this.registry)
			.parentObservation(parent)
			.lowCardinalityKeyValue("lock", lockName);
	}

	@Override
	public String toString() {
		return "ObservationLockObserver";
	}

	static String outcome(Throwable failure) {
		if (failure instanceof LockNotAcquiredException notAcquired) {
			return switch (notAcquired.reason()) {
				case CONTENDED -> "contended";
				case NO_QUORUM -> "no_quorum";
				default -> "error";
			};
		}
		return "error";
	}

	/** One call's observations. */
	private final class Call implements LockObservation {

		private final String lockName;

		private final Observation lock;

		/**
		 * Open on the calling thread until the method returns (or the call ends, if
		 * sooner).
		 */
		private Observation.@Nullable Scope scope;

		private final Observation acquire;

		private @Nullable Observation release;

		/**
		 * How the call went, as the whole call's {@code outcome}: every such observation
		 * carries one.
		 */
		private String outcome = "locked";

		Call(String lockName, Observation lock, Observation.Scope scope, Observation acquire) {
			this.lockName = lockName;
			this.lock = lock;
			this.scope = scope;
			this.acquire = acquire;
		}

		@Override
		public void acquired(Lease lease) {
			this.acquire.lowCardinalityKeyValue("outcome", "acquired").stop();
		}

		@Override
		public void notAcquired(Throwable failure) {
			this.acquire.lowCardinalityKeyValue("outcome", outcome(failure)).error(failure).stop();
			this.outcome = "not_acquired";
		}

		@Override
		public void leaveScope() {
			Observation.Scope open = this.scope;
			if (open != null) {
				this.scope = null;
				open.close();
			}
		}

		@Override
		public void skipped() {
			this.outcome = "skipped";
		}

		@Override
		public void fellBack() {
			this.outcome = "fallback";
		}

		@Override
		public void releasing() {
			this.release = child(RELEASE, this.lock, this.lockName).start();
		}

		@Override
		public void released(ReleaseOutcome outcome) {
			Observation release = this.release;
			if (release != null) {
				release.lowCardinalityKeyValue("outcome", outcome.name().toLowerCase(Locale.ROOT)).stop();
			}
		}

		@Override
		public void releaseFailed(RuntimeException failure) {
			Observation release = this.release;
			if (release != null) {
				release.lowCardinalityKeyValue("outcome", "error").error(failure).stop();
			}
		}

		@Override
		public void finished(@Nullable Throwable failure) {
			try {
				this.lock.lowCardinalityKeyValue("outcome", this.outcome);
				if (failure != null) {
					this.lock.error(failure);
				}
			}
			finally {
				leaveScope();
				this.lock.stop();
			}
		}

		@Override
		public String toString() {
			return "ObservationLockObserver.Call[" + this.lockName + "]";
		}

	}

}
