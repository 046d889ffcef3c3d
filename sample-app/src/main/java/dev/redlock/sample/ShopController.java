package dev.redlock.sample;

import java.util.List;

import dev.redlock.sample.PurchaseService.Purchase;
import dev.redlock.sample.StockStore.StockLevel;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The shop's HTTP API.
 *
 * <ul>
 * <li>{@code POST /api/skus/{sku}/buy}: buy one item under the lock; 200, 409 when sold
 * out, 423 or 503 when the lock is busy ({@link ShopExceptionHandler})</li>
 * <li>{@code POST /api/skus/{sku}/buy-unlocked}: the same without the lock</li>
 * <li>{@code GET /api/skus}: every SKU's stock, sold and oversold</li>
 * <li>{@code GET /api/skus/{sku}}: stock, sold, and how many were oversold</li>
 * <li>{@code POST /api/skus/{sku}/reset[?stock=N]}: start the SKU again with its initial
 * stock (or N)</li>
 * </ul>
 */
@RestController
@RequestMapping("/api/skus")
class ShopController {

	private final PurchaseService purchases;

	private final StockStore stock;

	private final ShopProperties properties;

	ShopController(PurchaseService purchases, StockStore stock, ShopProperties properties) {
		this.purchases = purchases;
		this.stock = stock;
		this.properties = properties;
	}

	@PostMapping("/{sku}/buy")
	ResponseEntity<Object> buy(@PathVariable String sku) {
		return respond(this.purchases.buy(known(sku)));
	}

	@PostMapping("/{sku}/buy-unlocked")
	ResponseEntity<Object> buyUnlocked(@PathVariable String sku) {
		return respond(this.purchases.buyUnlocked(known(sku)));
	}

	@GetMapping
	List<SkuView> all() {
		return this.properties.skus().stream().map(this::get).toList();
	}

	@GetMapping("/{sku}")
	SkuView get(@PathVariable String sku) {
		return SkuView.of(this.stock.level(known(sku), this.properties.initialStock()));
	}

	@PostMapping("/{sku}/reset")
	SkuView reset(@PathVariable String sku, @RequestParam(name = "stock", required = false) Long initialStock) {
		long stockToSet = (initialStock != null) ? initialStock : this.properties.initialStock();
		if (stockToSet < 0) {
			throw new IllegalArgumentException("stock must be 0 or more, got " + stockToSet);
		}
		this.stock.reset(known(sku), stockToSet);
		return get(sku);
	}

	private String known(String sku) {
		if (!this.properties.skus().contains(sku)) {
			throw new UnknownSkuException(sku, this.properties.skus());
		}
		return sku;
	}

	private static ResponseEntity<Object> respond(Purchase purchase) {
		if (purchase.bought()) {
			return ResponseEntity.ok(new Bought(purchase.sku(), true, purchase.stockLeft()));
		}
		return ResponseEntity.status(HttpStatus.CONFLICT).body(new Rejected(purchase.sku(), false, "sold out"));
	}

	record Bought(String sku, boolean bought, long stockLeft) {
	}

	record Rejected(String sku, boolean bought, String reason) {
	}

	record SkuView(String sku, long initialStock, long stock, long sold, long oversold) {

		static SkuView of(StockLevel level) {
			return new SkuView(level.sku(), level.initialStock(), level.stock(), level.sold(), level.oversold());
		}

	}

}
