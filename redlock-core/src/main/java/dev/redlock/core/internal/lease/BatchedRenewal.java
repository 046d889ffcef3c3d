package dev.redlock.core.internal.lease;

import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.ExtensionRequest;
import dev.redlock.core.internal.ScriptRounds;

/**
 * One lease's renewal as a batch of {@link RenewalBatches} drives it: started, with the
 * lease's state lock taken, before the batch's round; finished with the nodes' answer
 * after it. What the listeners are to be told is left in {@code reports}, run once every
 * lease of the batch is unlocked.
 */
interface BatchedRenewal {

	/**
	 * Starts the renewal: takes the lease's state lock, held until
	 * {@link #finishBatched}, unless another thread holds it (the renewal is then tried
	 * again shortly).
	 * @return what to ask of the nodes, or {@code null} when nothing is to be asked (the
	 * lock was busy, the renewal has ended, or it failed at once)
	 */
	@Nullable ExtensionRequest beginBatched(List<Runnable> reports);

	/**
	 * Finishes a started renewal and leaves the state lock.
	 * @param extension what the nodes said, or {@code null} when the round failed
	 */
	void finishBatched(ExtensionRequest request, ScriptRounds.@Nullable Extension extension, List<Runnable> reports);

	/** Stops for good: nothing more is renewed. */
	void cancel();

}
