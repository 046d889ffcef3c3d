package dev.redlock.core.internal.transport;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

import org.jspecify.annotations.Nullable;

/**
 * Counts the connections of one {@link NodeConnectionPool} and keeps at least
 * {@code minIdle} of them open: they are opened in the background as soon as the pool is
 * built, so that the first rounds of a service just started find them ready, and again
 * whenever connections were lost (a node that restarted, a reset network), once the node
 * can be reached. The first attempt's end, whether it connected or not, is reported to
 * the {@link WarmUp}.
 */
final class WarmConnections {

	private final NodeConnector connector;

	private final int minIdle;

	private final LongConsumer latency;

	/** Hands a connection opened here to the pool: to a waiting borrower, else idle. */
	private final Consumer<PipelinedConnection> keep;

	private final BooleanSupplier poolClosed;

	/**
	 * Connections of the pool open now, idle, borrowed or being opened to keep
	 * {@link #minIdle}; a subscriber's own connection is not one of them.
	 */
	private final AtomicInteger openOrOpening = new AtomicInteger();

	/** Told when the warm-up ends here; {@code null} once told. */
	private volatile @Nullable WarmUp warmUp;

	/** Connections opened to be kept, while the warm-up lasts. */
	private final AtomicInteger warmOpened = new AtomicInteger();

	WarmConnections(NodeConnector connector, int minIdle, WarmUp warmUp, LongConsumer latency,
			Consumer<PipelinedConnection> keep, BooleanSupplier poolClosed) {
		this.connector = connector;
		this.minIdle = minIdle;
		this.warmUp = (minIdle > 0) ? warmUp : null;
		this.latency = latency;
		this.keep = keep;
		this.poolClosed = poolClosed;
	}

	/** Starts opening the connections kept even when idle, in the background. */
	void start() {
		keepMinIdle();
	}

	/** Counts a connection the pool opened for a borrower. */
	void opened() {
		if (this.openOrOpening.incrementAndGet() < this.minIdle) {
			// the node answers again after connections were lost: refill the warm ones
			keepMinIdle();
		}
	}

	/** Counts a connection of the pool closed for good; refills the warm ones. */
	void closed() {
		if (this.openOrOpening.decrementAndGet() < this.minIdle) {
			keepMinIdle();
		}
	}

	/** Whether any connection is kept open even when idle. */
	boolean keepsAny() {
		return this.minIdle > 0;
	}

	/** How many connections of the pool are open or being opened to be kept. */
	int count() {
		return this.openOrOpening.get();
	}

	/** The pool closes: the warm-up, if still going, ends here without them. */
	void end() {
		warmUpEnded(false);
	}

	/**
	 * Opens connections in the background until {@link #minIdle} are open or being
	 * opened; nothing while the node is left alone after a failed attempt (the next
	 * connection that opens calls this again).
	 */
	private void keepMinIdle() {
		while (!this.poolClosed.getAsBoolean()) {
			int open = this.openOrOpening.get();
			if (open >= this.minIdle) {
				return;
			}
			if (this.connector.downFailure() != null) {
				warmUpEnded(false);
				return;
			}
			if (this.openOrOpening.compareAndSet(open, open + 1)) {
				try {
					this.connector.execute(this::openToKeep);
				}
				catch (RejectedExecutionException ex) {
					this.openOrOpening.decrementAndGet();
					return;
				}
			}
		}
	}

	/**
	 * Opens a connection for no borrower in particular: it goes to a borrower waiting for
	 * one to open, else it is kept idle.
	 */
	private void openToKeep() {
		boolean opened = false;
		try {
			if (this.poolClosed.getAsBoolean() || this.connector.downFailure() != null) {
				return;
			}
			PipelinedConnection connection = this.connector.connectAndGreet(WarmUp.CONNECT_TIMEOUT_MILLIS,
					this.latency);
			// counted already: opened() would count it again
			opened = true;
			this.keep.accept(connection);
		}
		catch (RuntimeException ex) {
			this.connector.failed(ex);
		}
		finally {
			if (!opened) {
				this.openOrOpening.decrementAndGet();
				warmUpEnded(false);
			}
			else if (this.warmOpened.incrementAndGet() >= this.minIdle) {
				warmUpEnded(true);
			}
		}
	}

	/**
	 * Tells the warm-up, once, how it ended here: every connection kept warm opened, or
	 * an attempt failed.
	 */
	private void warmUpEnded(boolean opened) {
		WarmUp told = this.warmUp;
		if (told != null) {
			this.warmUp = null;
			told.nodeDone(opened);
		}
	}

}
