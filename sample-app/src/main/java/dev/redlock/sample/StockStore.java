package dev.redlock.sample;

import java.util.List;

import redis.clients.jedis.RedisClient;
import redis.clients.jedis.params.SetParams;

/**
 * The shop's stock in Redis: per SKU, {@code shop:stock:<sku>} (items left),
 * {@code shop:sold:<sku>} (items sold) and {@code shop:initial:<sku>} (the stock it
 * started with, shared by every instance of the shop).
 *
 * <p>
 * Every method is a single Redis command or an atomic {@code MSET}/{@code MGET}. Buying
 * is not: it is a read followed by a write, which is exactly what the lock is for.
 */
public class StockStore {

	private static final String STOCK = "shop:stock:";

	private static final String SOLD = "shop:sold:";

	private static final String INITIAL = "shop:initial:";

	private final RedisClient redis;

	public StockStore(RedisClient redis) {
		this.redis = redis;
	}

	/**
	 * Seeds a SKU unless it already has stock, so a restarted shop keeps what it sold.
	 * @param sku the SKU
	 * @param initialStock the stock to start with
	 * @return whether the SKU was seeded now
	 */
	public boolean seedIfAbsent(String sku, long initialStock) {
		String value = Long.toString(initialStock);
		boolean seeded = "OK".equals(this.redis.set(STOCK + sku, value, SetParams.setParams().nx()));
		this.redis.set(SOLD + sku, "0", SetParams.setParams().nx());
		this.redis.set(INITIAL + sku, value, SetParams.setParams().nx());
		return seeded;
	}

	/**
	 * Puts a SKU back to the given stock with nothing sold, atomically.
	 * @param sku the SKU
	 * @param initialStock the stock to start again with
	 */
	public void reset(String sku, long initialStock) {
		String value = Long.toString(initialStock);
		this.redis.mset(STOCK + sku, value, SOLD + sku, "0", INITIAL + sku, value);
	}

	/**
	 * Reads the items left.
	 * @param sku the SKU
	 * @return the stock, 0 when the SKU has none recorded
	 */
	public long stock(String sku) {
		return parse(this.redis.get(STOCK + sku));
	}

	/**
	 * Overwrites the items left: the second half of the read-think-write.
	 * @param sku the SKU
	 * @param stock the new stock
	 */
	public void writeStock(String sku, long stock) {
		this.redis.set(STOCK + sku, Long.toString(stock));
	}

	/**
	 * Counts one more item sold.
	 * @param sku the SKU
	 * @return the items sold so far
	 */
	public long recordSale(String sku) {
		return this.redis.incr(SOLD + sku);
	}

	/**
	 * Reads stock, sales and initial stock of a SKU in one atomic {@code MGET}.
	 * @param sku the SKU
	 * @param defaultInitialStock the initial stock to report if none is recorded
	 * @return the levels
	 */
	public StockLevel level(String sku, long defaultInitialStock) {
		List<String> values = this.redis.mget(STOCK + sku, SOLD + sku, INITIAL + sku);
		long initial = (values.get(2) != null) ? parse(values.get(2)) : defaultInitialStock;
		return new StockLevel(sku, initial, parse(values.get(0)), parse(values.get(1)));
	}

	private static long parse(String value) {
		return (value != null) ? Long.parseLong(value) : 0L;
	}

	/**
	 * Stock levels of one SKU.
	 *
	 * @param sku the SKU
	 * @param initialStock the stock it started with
	 * @param stock the items left, as Redis has it
	 * @param sold the items sold
	 */
	public record StockLevel(String sku, long initialStock, long stock, long sold) {

		/**
		 * Returns how many more items were sold than there were.
		 * @return {@code sold - initialStock}, at least 0
		 */
		public long oversold() {
			return Math.max(0, this.sold - this.initialStock);
		}

	}

}
