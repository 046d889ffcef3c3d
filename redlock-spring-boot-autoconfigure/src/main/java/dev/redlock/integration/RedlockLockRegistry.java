package dev.redlock.integration;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.scheduling.TaskScheduler;

import dev.redlock.core.LockRequest;
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
 * Each key is one {@link Lock} (the same instance on every {@link #obtain} call, until it
 * is expired): resource {@code lock-registry:<key>}, lock name (in metrics)
 * {@code lock-registry}. A key is a {@code String}, or a value keyed by its own
 * {@code toString()}; one that would print its identity is refused. Its semantics are
 * those of a {@link ReentrantLock} across threads of this process, and of a Redlock
 * across processes: the thread that holds it may lock it again (a hold count), and only
 * its last {@code unlock()} releases the lease. While held, the lease renews itself (up
 * to {@code redlock.max-hold}), and each renewal checks the nodes; locking it again while
 * held confirms the lease is still valid as far as the last renewal knows, and takes the
 * lock afresh when it is not, which is how {@code LockRegistryLeaderInitiator}'s
 * heartbeat notices a lost leadership; if it cannot be taken afresh, the thread no longer
 * holds it at any depth (a later {@code unlock()} throws
 * {@link IllegalMonitorStateException}). {@link Lock#newCondition()} is not supported.
 *
 * <p>
 * As an {@link ExpirableLockRegistry}, it forgets the locks of keys unused for a while
 * when asked ({@link #expireUnusedOlderThan(long)}): call that periodically when keys are
 * unbounded (order ids, user ids), or the registry keeps one lock per key ever used. A
 * lock held, or being waited for, by a thread of this process is never forgotten; one
 * obtained again afterwards is a new object, and a reference kept from before still works
 * as the key's lock. As a {@link RenewableLockRegistry}, it renews on demand the lease of
 * a lock the current thread holds ({@link #renewLock(Object, Duration)}).
 */
public final class RedlockLockRegistry implements ExpirableLockRegistry<Lock>, RenewableLockRegistry<Lock> {

	/** What each key's resource starts with. */
	public static final String RESOURCE_PREFIX = "lock-registry:";

	/** The lock name of every lock of the registry, in metrics. */
	public static final String LOCK_NAME = "lock-registry";

	/** How long {@link Lock#lock()} waits per attempt before trying again. */
	private static final Duration LOCK_ATTEMPT = Duration.ofSeconds(1);

	/** Whether a class's instances print as {@link Object#toString()} does. */
	private static final ClassValue<Boolean> PRINTS_IDENTITY = new ClassValue<>() {

		@Override
		protected Boolean computeValue(Class<?> type) {
			try {
				return type.getMethod("toString").getDeclaringClass() == Object.class;
			}
			catch (NoSuchMethodException ex) {
				throw new IllegalStateException("Every class has toString()", ex);
			}
		}

	};

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

	/**
	 * The key's lock.
	 * @param lockKey a {@code String}, or a value whose own {@code toString()} identifies
	 * it (a number, a {@code UUID}): it is keyed by that text
	 * @return the same lock for the same text, until it is expired
	 * @throws IllegalArgumentException if the key prints as its class and identity hash
	 * (its class has no {@code toString()} of its own, or it is an array): a different
	 * resource in every process, so nothing would be excluded
	 */
	@Override
	public Lock obtain(Object lockKey) {
		return this.locks.computeIfAbsent(textOf(lockKey), RedlockLock::new);
	}

	/**
	 * Forgets the locks not held, nor being waited for, by any thread of this process
	 * whose last use (acquisition, renewal or release) was at least {@code age}
	 * milliseconds ago. The registry then holds the locks in use and those used within
	 * {@code age}; a key obtained again gets a new lock. Locks on the nodes are not
	 * touched: a forgotten lock is one no thread of this process holds.
	 * @param age how long a lock must have been unused to be forgotten, in milliseconds;
	 * {@code 0} forgets every lock not in use
	 */
	@Override
	public void expireUnusedOlderThan(long age) {
		long now = System.nanoTime();
		long ageNanos = TimeUnit.MILLISECONDS.toNanos(age);
		for (String key : this.locks.keySet()) {
			// under the key's bin lock, so that no thread pins the lock in between
			this.locks.computeIfPresent(key, (k, lock) -> lock.isUnusedFor(now, ageNanos) ? null : lock);
		}
	}

	/**
	 * Renews, by the registry's TTL, the lease of the key's lock held by the current
	 * thread. See {@link #renewLock(Object, Duration)}.
	 * @param lockKey the key
	 */
	@Override
	public void renewLock(Object lockKey) {
		renewLock(lockKey, this.ttl);
	}

	/**
	 * Renews the lease of the key's lock held by the current thread: compare-and-
	 * {@code PEXPIRE} to {@code ttl} on the nodes that still hold it, as
	 * {@link Lease#extend(Duration)}. Automatic renewal goes on after it, every third of
	 * the registry's TTL, by that TTL. A renewal that fails marks the lease lost, as a
	 * failed automatic renewal does: locking again then takes the lock afresh or lets go
	 * of it.
	 * @param lockKey the key
	 * @param ttl the lease's new time to live on the nodes, from now
	 * @throws IllegalStateException if the registry has no lock for the key (no thread
	 * holds it), if the renewal did not reach a quorum within the lease's validity (the
	 * lease is lost), or if the lease was renewed this way {@code redlock.max-extensions}
	 * times
	 * @throws IllegalMonitorStateException if the current thread does not hold the lock
	 * @throws IllegalArgumentException if the key prints its identity, as
	 * {@link #obtain(Object)} refuses
	 */
	@Override
	public void renewLock(Object lockKey, Duration ttl) {
		String key = textOf(lockKey);
		RedlockLock lock = this.locks.get(key);
		if (lock == null) {
			throw new IllegalStateException("Could not find mutex at " + RESOURCE_PREFIX + key);
		}
		lock.renew(ttl);
	}

	/**
	 * Does nothing: the locks of this registry always renew their leases themselves, on
	 * the {@link Redlock}'s renewal thread, while held.
	 * @param renewalTaskScheduler ignored
	 */
	@Override
	public void setRenewalTaskScheduler(TaskScheduler renewalTaskScheduler) {
	}

	/**
	 * How many locks the registry keeps now.
	 * @return the number of keys with a lock object
	 */
	int size() {
		return this.locks.size();
	}

	private static String textOf(Object lockKey) {
		if (lockKey instanceof String key) {
			return key;
		}
		if (PRINTS_IDENTITY.get(lockKey.getClass())) {
			throw new IllegalArgumentException("Lock key of type " + lockKey.getClass().getTypeName()
					+ " has no toString() of its own: it prints as its class and identity hash, a different resource "
					+ "in every process, and nothing would be locked. Obtain the lock by a String, or a value whose "
					+ "toString() identifies the resource");
		}
		return lockKey.toString();
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

		private final String key;

		private final String resource;

		/**
		 * Fair: this process's threads get the key in the order they asked, as in the
		 * {@code Redlock}'s own queue.
		 */
		private final ReentrantLock local = new ReentrantLock(true);

		/** The lease while the local lock is held; guarded by {@link #local}. */
		private @Nullable Lease lease;

		/**
		 * Holds plus attempts under way, by the threads of this process: a pinned lock is
		 * not expired. Incremented only while the registry maps the key to this lock,
		 * under the key's bin lock.
		 */
		private final AtomicInteger pins = new AtomicInteger();

		/** {@link System#nanoTime()} of the creation or the last use. */
		private volatile long lastUsed = System.nanoTime();

		RedlockLock(String key) {
			this.key = key;
			this.resource = RESOURCE_PREFIX + key;
		}

		/**
		 * The key's lock in the registry, pinned: this one, registered again if it was
		 * expired and the key has no lock, or the one that replaced it.
		 */
		private RedlockLock pinned() {
			return RedlockLockRegistry.this.locks.compute(this.key, (k, current) -> {
				RedlockLock lock = (current != null) ? current : this;
				lock.pins.incrementAndGet();
				return lock;
			});
		}

		boolean isUnusedFor(long now, long ageNanos) {
			return this.pins.get() == 0 && !this.local.isLocked() && now - this.lastUsed >= ageNanos;
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
			RedlockLock lock = pinned();
			boolean held = false;
			try {
				held = lock.tryLockPinned(time, unit);
				return held;
			}
			finally {
				if (held) {
					lock.lastUsed = System.nanoTime();
				}
				else {
					lock.pins.decrementAndGet();
				}
			}
		}

		/** Tries to lock this lock, pinned by the caller for this attempt. */
		private boolean tryLockPinned(long time, TimeUnit unit) throws InterruptedException {
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
						.acquire(LockRequest.of(this.resource, RedlockLockRegistry.this.ttl).named(LOCK_NAME), wait)
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
					// any more; the earlier holds' pins go with them (the caller drops
					// this attempt's)
					this.local.unlock();
					while (lost && this.local.isHeldByCurrentThread()) {
						this.local.unlock();
						this.pins.decrementAndGet();
					}
				}
			}
		}

		@Override
		public void unlock() {
			// a held lock is pinned, so it is the one the registry maps the key to
			RedlockLock lock = RedlockLockRegistry.this.locks.get(this.key);
			if (lock == null || !lock.local.isHeldByCurrentThread()) {
				throw new IllegalMonitorStateException("The lock " + this.resource + " is not held by this thread");
			}
			lock.unlockHeld();
		}

		/** Unlocks this lock, held by the current thread. */
		private void unlockHeld() {
			try {
				if (this.local.getHoldCount() == 1 && this.lease != null) {
					Lease held = this.lease;
					this.lease = null;
					held.release();
				}
			}
			finally {
				this.lastUsed = System.nanoTime();
				this.local.unlock();
				this.pins.decrementAndGet();
			}
		}

		/** Renews the lease of this lock, which the current thread must hold. */
		void renew(Duration ttl) {
			if (!this.local.isHeldByCurrentThread()) {
				throw new IllegalMonitorStateException("The current thread doesn't own mutex at " + this.resource);
			}
			// set whenever the lock is held (guarded by the local lock)
			Lease held = Objects.requireNonNull(this.lease, "lease");
			if (!held.extend(ttl)) {
				throw new IllegalStateException("Could not renew mutex at " + this.resource + ": the lease was lost");
			}
			this.lastUsed = System.nanoTime();
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
