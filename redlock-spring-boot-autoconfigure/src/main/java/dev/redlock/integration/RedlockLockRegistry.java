package dev.redlock.integration;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;
import org.springframework.integration.support.locks.LockRegistry;

import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.Redlock;

/**
 * A Spring Integration {@link LockRegistry} on Redlock, so that
 * {@code LockRegistryLeaderInitiator} leader election, aggregators and the other
 * components that take a lock registry hold their locks on a quorum of independent Redis
 * nodes.
 *
 * <p>
 * Each key is one {@link Lock} (the same instance on every {@link #obtain} call):
 * resource {@code lock-registry:<key>}, lock name (in metrics) {@code lock-registry}. Its
 * semantics are those of a {@link ReentrantLock} across threads of this process, and of a
 * Redlock across processes: the thread that holds it may lock it again (a hold count),
 * and only its last {@code unlock()} releases the lease. While held, the lease renews
 * itself (up to {@code redlock.max-hold}), and each renewal checks the nodes; locking it
 * again while held confirms the lease is still valid as far as the last renewal knows,
 * and takes the lock afresh when it is not, which is how
 * {@code LockRegistryLeaderInitiator}'s heartbeat notices a lost leadership; if it cannot
 * be taken afresh, the thread no longer holds it at any depth (a later {@code unlock()}
 * throws {@link IllegalMonitorStateException}). {@link Lock#newCondition()} is not
 * supported. Locks are kept per key for the registry's life: use bounded keys.
 */
public final class RedlockLockRegistry implements LockRegistry<Lock> {

	/** What each key's resource starts with. */
	public static final String RESOURCE_PREFIX = "lock-registry:";

	/** The lock name of every lock of the registry, in metrics. */
	public static final String LOCK_NAME = "lock-registry";

	/** How long {@link Lock#lock()} waits per attempt before trying again. */
	private static final Duration LOCK_ATTEMPT = Duration.ofSeconds(1);

	private final Redlock redlock;

	private final Duration ttl;

	private final Map<String, RedlockLock> locks = new ConcurrentHashMap<>();

	/**
	 * Creates a registry whose locks live {@code redlock.default-ttl} on the nodes
	 * between renewals.
	 * @param redlock the lock client
	 */
	public RedlockLockRegistry(Redlock redlock) {
		this(redlock, redlock.settings().defaultTtl());
	}

	/**
	 * Creates a registry.
	 * @param redlock the lock client
	 * @param ttl how long a lock lives on the nodes between renewals (a holder that dies
	 * frees it after this)
	 */
	public RedlockLockRegistry(Redlock redlock, Duration ttl) {
		this.redlock = Objects.requireNonNull(redlock, "redlock");
		this.ttl = Objects.requireNonNull(ttl, "ttl");
	}

	@Override
	public Lock obtain(Object lockKey) {
		String key = lockKey.toString();
		return this.locks.computeIfAbsent(key, RedlockLock::new);
	}

	@Override
	public String toString() {
		return "RedlockLockRegistry" + this.redlock.nodeAddresses();
	}

	/**
	 * One key's lock: a local reentrant lock for the threads of this process, a lease for
	 * the others.
	 */
	private final class RedlockLock implements Lock {

		private final String resource;

		/**
		 * Fair: this process's threads get the key in the order they asked, as in the
		 * {@code Redlock}'s own queue.
		 */
		private final ReentrantLock local = new ReentrantLock(true);

		/** The lease while the local lock is held; guarded by {@link #local}. */
		private @Nullable Lease lease;

		RedlockLock(String key) {
			this.resource = RESOURCE_PREFIX + key;
		}

		@Override
		public void lock() {
			boolean interrupted = false;
			try {
				while (true) {
					try {
						if (tryLock(LOCK_ATTEMPT.toMillis(), TimeUnit.MILLISECONDS)) {
							return;
						}
					}
					catch (InterruptedException ex) {
						interrupted = true;
					}
				}
			}
			finally {
				if (interrupted) {
					Thread.currentThread().interrupt();
				}
			}
		}

		@Override
		public void lockInterruptibly() throws InterruptedException {
			while (!tryLock(LOCK_ATTEMPT.toMillis(), TimeUnit.MILLISECONDS)) {
				if (Thread.interrupted()) {
					throw new InterruptedException();
				}
			}
		}

		@Override
		public boolean tryLock() {
			try {
				return tryLock(0, TimeUnit.MILLISECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return false;
			}
		}

		@Override
		public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
			long deadline = System.nanoTime() + unit.toNanos(time);
			if (!this.local.tryLock(time, unit)) {
				return false;
			}
			boolean held = false;
			boolean lost = false;
			try {
				Lease current = this.lease;
				if (current != null && current.isValid()) {
					held = true;
					return true;
				}
				if (current != null) {
					// held by this thread, but the lease was lost: the lock must be won
					// again, or is not held at all
					lost = true;
					current.release();
					this.lease = null;
				}
				Duration wait = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
				try {
					this.lease = RedlockLockRegistry.this.redlock
						.acquire(LOCK_NAME, this.resource, RedlockLockRegistry.this.ttl, wait)
						.autoRenew();
					held = true;
					return true;
				}
				catch (LockNotAcquiredException ex) {
					if (ex.reason() == LockNotAcquiredException.Reason.INTERRUPTED) {
						throw new InterruptedException("interrupted while acquiring " + this.resource);
					}
					return false;
				}
			}
			finally {
				if (!held) {
					// a lost lock that could not be won again is not held at any depth
					// any more
					do {
						this.local.unlock();
					}
					while (lost && this.local.isHeldByCurrentThread());
				}
			}
		}

		@Override
		public void unlock() {
			if (!this.local.isHeldByCurrentThread()) {
				throw new IllegalMonitorStateException("The lock " + this.resource + " is not held by this thread");
			}
			try {
				if (this.local.getHoldCount() == 1 && this.lease != null) {
					Lease held = this.lease;
					this.lease = null;
					held.release();
				}
			}
			finally {
				this.local.unlock();
			}
		}

		@Override
		public Condition newCondition() {
			throw new UnsupportedOperationException("Conditions are not supported by Redlock locks");
		}

		@Override
		public String toString() {
			return "RedlockLock[" + this.resource + "]";
		}

	}

}
