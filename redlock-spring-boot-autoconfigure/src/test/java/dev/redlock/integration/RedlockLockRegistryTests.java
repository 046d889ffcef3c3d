package dev.redlock.integration;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.redlock.TwoRedlocks;
import dev.redlock.core.Redlock;
import dev.redlock.test.RedisNodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The registry's locks on three real nodes: reentrant for their thread, exclusive across
 * threads and across processes (two registries on two {@code Redlock} instances),
 * released by the last {@code unlock()}.
 */
class RedlockLockRegistryTests {

	private RedisNodes nodes;

	private TwoRedlocks redlocks;

	@BeforeEach
	void start() {
		this.nodes = RedisNodes.start(3);
		this.redlocks = TwoRedlocks.on(this.nodes);
	}

	@AfterEach
	void stop() {
		this.redlocks.close();
		this.nodes.close();
	}

	@Test
	void keysThatPrintTheirIdentityAreRefusedOthersLockTheirText() throws Exception {
		RedlockLockRegistry registry = new RedlockLockRegistry(this.redlocks.here());
		RedlockLockRegistry otherProcess = new RedlockLockRegistry(this.redlocks.elsewhere());
		// their text differs in every JVM: two instances would never exclude each other
		assertThatIllegalArgumentException().isThrownBy(() -> registry.obtain(new Order("A-1")))
			.withMessageContaining(Order.class.getTypeName())
			.withMessageContaining("toString()");
		assertThatIllegalArgumentException().isThrownBy(() -> registry.obtain(new String[] { "A-1" }))
			.withMessageContaining("String[]");
		assertThatIllegalArgumentException().isThrownBy(() -> registry.renewLock(new Order("A-1")))
			.withMessageContaining(Order.class.getTypeName());
		// a value with a text of its own is keyed by it, as its String is
		Lock lock = registry.obtain(42L);
		assertThat(lock.tryLock()).isTrue();
		assertThat(otherProcess.obtain("42").tryLock()).as("the same key as text, elsewhere").isFalse();
		lock.unlock();
	}

	/** A key class without a {@code toString()} of its own. */
	private static final class Order {

		private final String id;

		Order(String id) {
			this.id = id;
		}

	}

	@Test
	void reentrantForItsThreadExclusiveForOtherThreadsAndProcesses() throws Exception {
		RedlockLockRegistry registry = new RedlockLockRegistry(this.redlocks.here());
		RedlockLockRegistry otherProcess = new RedlockLockRegistry(this.redlocks.elsewhere());
		Lock lock = registry.obtain("orders");
		assertThat(registry.obtain("orders")).isSameAs(lock);
		lock.lock();
		assertThat(lock.tryLock()).as("again, on the same thread").isTrue();
		assertThat(CompletableFuture.supplyAsync(lock::tryLock).get(5, TimeUnit.SECONDS)).as("another thread")
			.isFalse();
		assertThat(otherProcess.obtain("orders").tryLock(200, TimeUnit.MILLISECONDS)).as("another process").isFalse();
		lock.unlock();
		assertThat(otherProcess.obtain("orders").tryLock()).as("one hold is left").isFalse();
		lock.unlock();
		Lock theirs = otherProcess.obtain("orders");
		assertThat(theirs.tryLock()).as("after the last unlock").isTrue();
		theirs.unlock();
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock);
	}

	@Test
	void lockingAgainAfterTheLeaseWasLostTakesItAfreshOrLetsGo() throws Exception {
		RedlockLockRegistry registry = new RedlockLockRegistry(this.redlocks.here(), Duration.ofMillis(1500));
		Lock lock = registry.obtain("leader");
		lock.lock();
		// the lease is lost behind the holder's back: the key vanishes from every node,
		// and someone else takes it
		this.nodes.nodes()
			.forEach((node) -> node.command("DEL", "redlock:" + RedlockLockRegistry.RESOURCE_PREFIX + "leader"));
		Lock theirs = new RedlockLockRegistry(this.redlocks.elsewhere()).obtain("leader");
		assertThat(theirs.tryLock()).isTrue();
		// the holder's next renewal (a third of the TTL) finds the lease gone; from then
		// on its heartbeat, locking
		// again, fails to take it afresh, and the holder holds nothing any more
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
		boolean stillHeld = true;
		while (stillHeld && System.nanoTime() - deadline < 0) {
			stillHeld = lock.tryLock();
			if (stillHeld) {
				lock.unlock();
				Thread.onSpinWait();
			}
		}
		assertThat(stillHeld).as("the heartbeat noticed the lost lease within 5 s").isFalse();
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock);
		theirs.unlock();
		assertThat(lock.tryLock()).isTrue();
		lock.unlock();
	}

}
