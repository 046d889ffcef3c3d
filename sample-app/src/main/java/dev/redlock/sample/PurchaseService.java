package dev.redlock.sample;

import java.time.Duration;

import dev.redlock.annotation.DistributedLock;

import org.springframework.stereotype.Service;

/**
 * Buys one item of a SKU by reading the stock, thinking, and writing the stock back. The
 * three steps are deliberately not atomic: two buyers that read the same stock both sell
 * the same last item. {@link #buy} runs them under a distributed lock per SKU, so buyers
 * in every instance of the shop take turns; {@link #buyUnlocked} does not, and oversells
 * under concurrent load.
 */
@Service
public class PurchaseService {

	private final StockStore stock;

	private final Duration thinkTime;

	public PurchaseService(StockStore stock, ShopProperties properties) {
		this.stock = stock;
		this.thinkTime = properties.thinkTime();
	}

	/**
	 * Buys one item while holding the lock {@code stock:<sku>} on a majority of the Redis
	 * nodes.
	 * @param sku the SKU
	 * @return what happened
	 * @throws dev.redlock.core.LockNotAcquiredException if the lock was not acquired
	 * within 2 seconds
	 */
	@DistributedLock(name = "shop.buy", key = "'stock:' + #sku", ttl = "${shop.buy-ttl}", waitTime = "2s")
	public Purchase buy(String sku) {
		return readThinkWrite(sku);
	}

	/**
	 * Buys one item with no lock: the twin of {@link #buy} that shows the race.
	 * @param sku the SKU
	 * @return what happened, possibly an item that was not there
	 */
	public Purchase buyUnlocked(String sku) {
		return readThinkWrite(sku);
	}

	private Purchase readThinkWrite(String sku) {
		long left = this.stock.stock(sku);
		think();
		if (left <= 0) {
			return Purchase.soldOut(sku);
		}
		this.stock.writeStock(sku, left - 1);
		this.stock.recordSale(sku);
		return Purchase.bought(sku, left - 1);
	}

	private void think() {
		if (this.thinkTime.isZero()) {
			return;
		}
		try {
			Thread.sleep(this.thinkTime.toMillis(), this.thinkTime.toNanosPart() % 1_000_000);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while buying", ex);
		}
	}

	/**
	 * The outcome of one purchase.
	 *
	 * @param sku the SKU
	 * @param bought whether an item was sold
	 * @param stockLeft the stock written back, when bought
	 */
	public record Purchase(String sku, boolean bought, long stockLeft) {

		static Purchase bought(String sku, long stockLeft) {
			return new Purchase(sku, true, stockLeft);
		}

		static Purchase soldOut(String sku) {
			return new Purchase(sku, false, 0);
		}

	}

}
