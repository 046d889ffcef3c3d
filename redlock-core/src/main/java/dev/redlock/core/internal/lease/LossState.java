package dev.redlock.core.internal.lease;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redlock.core.LossReason;
import dev.redlock.core.internal.thread.OnDemandThread;

/**
 * Whether and why a lease was lost, and the callbacks waiting for that: the reason is set
 * once, by whichever thread finds the loss first, and that thread takes the callbacks to
 * run. A callback that throws is logged, and the others still run.
 */
final class LossState {

	private static final Logger logger = LoggerFactory.getLogger(LossState.class);

	private final String lockName;

	private volatile @Nullable LossReason reason;

	/** Guarded by {@code this}; created by the first callback. */
	private @Nullable List<Runnable> callbacks;

	LossState(String lockName) {
		this.lockName = lockName;
	}

	@Nullable LossReason reason() {
		return this.reason;
	}

	boolean isLost() {
		return this.reason != null;
	}

	/** Whether callbacks wait for the loss. */
	synchronized boolean hasCallbacks() {
		return this.callbacks != null && !this.callbacks.isEmpty();
	}

	/**
	 * Keeps a callback for the loss.
	 * @return {@code false} if the loss already happened: then the caller runs the
	 * callback itself
	 */
	synchronized boolean register(Runnable callback) {
		if (this.reason != null) {
			return false;
		}
		if (this.callbacks == null) {
			this.callbacks = new ArrayList<>();
		}
		this.callbacks.add(callback);
		return true;
	}

	/**
	 * Sets the reason, once.
	 * @return the callbacks to run now, or {@code null} if the loss was already set
	 */
	synchronized @Nullable List<Runnable> set(LossReason reason) {
		if (this.reason != null) {
			return null;
		}
		this.reason = reason;
		List<Runnable> waiting = (this.callbacks != null) ? this.callbacks : List.of();
		this.callbacks = null;
		return waiting;
	}

	/**
	 * Runs callbacks, each on its own guard.
	 * @param thread where they run; {@code null} for the calling thread
	 */
	void run(List<Runnable> toRun, @Nullable OnDemandThread thread) {
		if (toRun.isEmpty()) {
			return;
		}
		Runnable runAll = () -> toRun.forEach(this::run);
		if (thread != null) {
			thread.execute(runAll, runAll);
		}
		else {
			runAll.run();
		}
	}

	void run(Runnable callback) {
		try {
			callback.run();
		}
		catch (VirtualMachineError ex) {
			throw ex;
		}
		catch (Throwable ex) {
			// one failing callback must not keep the others from running
			logger.warn("A lease-lost callback of lock '{}' failed; ignored", this.lockName, ex);
		}
	}

}
