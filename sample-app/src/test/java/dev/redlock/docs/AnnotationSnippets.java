package dev.redlock.docs;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import dev.redlock.annotation.DistributedLock;
import dev.redlock.annotation.OnLocked;
import dev.redlock.annotation.Renewal;
import dev.redlock.core.Lease;
import dev.redlock.core.LockRequest;
import dev.redlock.core.Redlock;
import dev.redlock.interceptor.LockContext;

import org.springframework.scheduling.annotation.Scheduled;

/**
 * The examples of {@code docs/annotation.md} that need nothing beyond the starter; those
 * that need Reactor, Spring Integration or ShedLock are in the auto-configuration
 * module's {@code dev.redlock.docs.IntegrationSnippets}.
 */
class AnnotationSnippets {

	private final Executor pool = Runnable::run;

	private final Prices prices = (sku) -> new Price();

	private final LedgerStore ledgerStore = (account, entry, token) -> {
	};

	// tag::examples[]
	// a nightly job that runs on one instance of the cluster per tick (ShedLock-style).
	// The ttl is above the 60 s restart quarantine, which caps every TTL on the nodes:
	// the lock is taken with a 60 s TTL and renewed while the method runs, up to
	// 10 minutes (logged once at startup). minHold may not exceed the quarantine.
	@Scheduled(cron = "0 0 2 * * *")
	@DistributedLock(name = "nightly-report", ttl = "10m", minHold = "30s", waitTime = "0s", onLocked = OnLocked.SKIP)
	public void nightlyReport() {
		// ...
	}

	// serve a cached price while another instance is refreshing it
	@DistributedLock(key = "'price:' + #sku", waitTime = "0s", onLocked = OnLocked.FALLBACK, fallback = "cachedPrice")
	public Price price(String sku) {
		return this.prices.refresh(sku);
	}

	Price cachedPrice(String sku) {
		return this.prices.cached(sku);
	}

	// both accounts or neither, in the same order whatever the direction:
	// no deadlock between A→B and B→A
	@DistributedLock(keys = { "'acct:' + #from", "'acct:' + #to" }, ttl = "10s", waitTime = "5s")
	public void transfer(String from, String to, long amount) {
		// ...
	}

	// only large payments are serialised
	@DistributedLock(key = "'payment:' + #accountId", condition = "#amount > 1000")
	public void pay(String accountId, long amount) {
		// ...
	}

	// the lock is held until the future completes (or is cancelled),
	// not until the method returns
	@DistributedLock(key = "'export:' + #id", ttl = "1m", autoRenew = Renewal.ON)
	public CompletableFuture<Report> export(String id) {
		return CompletableFuture.supplyAsync(() -> build(id), this.pool);
	}
	// end::examples[]

	// tag::fencing[]
	@DistributedLock(key = "'ledger:' + #account", ttl = "10s", fencing = true)
	public void post(String account, Entry entry) {
		long token = LockContext.fencingToken().orElseThrow();
		// the store: UPDATE … WHERE fence <= :token (a complete example below)
		this.ledgerStore.write(account, entry, token);
	}

	// programmatic
	public void post(Redlock redlock, String account, Entry entry) {
		LockRequest request = LockRequest.of("ledger:" + account, Duration.ofSeconds(10)).named("ledger").fenced();
		try (Lease lease = redlock.acquire(request, Duration.ofSeconds(2))) {
			this.ledgerStore.write(account, entry, lease.fencingToken().orElseThrow());
		}
	}
	// end::fencing[]

	void redlockBean(Redlock redlock) {
		// tag::redlock-bean[]
		try (Lease lease = redlock.acquire("stock:42", Duration.ofSeconds(10), Duration.ofSeconds(2))) {
			// ... first step
			if (lease.remainingValidity().compareTo(Duration.ofSeconds(2)) < 0 && !lease.extend()) {
				// not extended (no quorum, or too late): the lease is lost
				// and someone else may hold the lock now
				throw new IllegalStateException("lost the lock on stock:42 before the second step");
			}
			// ... second step, with the lease valid again for up to 10 s
		} // released once; later close() calls do nothing
			// end::redlock-bean[]
	}

	private Report build(String id) {
		return new Report();
	}

	record Price() {
	}

	record Report() {
	}

	record Entry() {
	}

	interface Prices {

		Price refresh(String sku);

		default Price cached(String sku) {
			return refresh(sku);
		}

	}

	interface LedgerStore {

		void write(String account, Entry entry, long token);

	}

}
