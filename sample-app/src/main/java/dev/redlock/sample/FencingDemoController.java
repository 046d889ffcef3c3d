package dev.redlock.sample;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.redlock.core.LockRequest;
import dev.redlock.core.Lease;
import dev.redlock.core.Redlock;

/**
 * {@code POST /api/demo/fencing}: why fencing tokens exist, in one request. Holder A
 * takes a fenced lock with a TTL of one second and writes to the {@link FencedLedger};
 * then A stalls (a GC pause, a frozen VM) past its lease. The lock expires, holder B
 * takes it (a greater token) and writes. A wakes up, still believing it holds the lock,
 * and writes with its old token: the ledger refuses it.
 */
@RestController
class FencingDemoController {

	private static final String RESOURCE = "ledger:demo";

	private static final Duration SHORT_TTL = Duration.ofSeconds(1);

	private final Redlock redlock;

	private final FencedLedger ledger;

	FencingDemoController(Redlock redlock, FencedLedger ledger) {
		this.redlock = redlock;
		this.ledger = ledger;
	}

	@PostMapping("/api/demo/fencing")
	FencingDemo run() {
		Lease a = this.redlock.acquire(LockRequest.of(RESOURCE, SHORT_TTL).named("fencing-demo").fenced(),
				Duration.ofSeconds(5));
		long tokenA = a.fencingToken().orElseThrow();
		boolean firstWriteByA = this.ledger.write(tokenA, "100 (written by A)");

		// A stalls past its lease; here the stall is simulated, in production it is a
		// pause nobody chose
		while (a.remainingValidity().compareTo(Duration.ZERO) > 0) {
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
		}
		Lease b = this.redlock.acquire(LockRequest.of(RESOURCE, SHORT_TTL).named("fencing-demo").fenced(),
				Duration.ofSeconds(5));
		long tokenB = b.fencingToken().orElseThrow();
		boolean writeByB = this.ledger.write(tokenB, "80 (written by B)");
		b.release();

		// A wakes up and writes what it computed before the pause
		boolean staleWriteByA = this.ledger.write(tokenA, "90 (stale write by A)");
		return new FencingDemo(tokenA, firstWriteByA, tokenB, writeByB, staleWriteByA, a.release().name(),
				this.ledger.balance(), this.ledger.highestToken());
	}

	/**
	 * What happened.
	 *
	 * @param tokenA holder A's token
	 * @param firstWriteByA whether A's write before the pause was accepted
	 * @param tokenB holder B's token, greater than A's
	 * @param writeByB whether B's write was accepted
	 * @param staleWriteByA whether A's write after the pause was accepted (it must not
	 * be)
	 * @param releaseByA what A's late release found ({@code EXPIRED}: the lock was no
	 * longer its own)
	 * @param ledgerBalance what the ledger holds at the end
	 * @param ledgerHighestToken the highest token the ledger has seen
	 */
	record FencingDemo(long tokenA, boolean firstWriteByA, long tokenB, boolean writeByB, boolean staleWriteByA,
			String releaseByA, String ledgerBalance, long ledgerHighestToken) {
	}

}
